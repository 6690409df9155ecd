// Package app holds the tessera-cache-server command line.
package app

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/cacheserver/options"
	"github.com/tessera-dev/tessera/cacheserver/server"
)

// NewCommand returns the tessera-cache-server command.
func NewCommand(ctx context.Context) *cobra.Command {
	o := options.NewOptions()
	logOptions := logs.NewOptions()
	cmd := &cobra.Command{
		Use:   "tessera-cache-server",
		Short: "Serve the replicas of the objects every shard must see",
		Long: `tessera-cache-server is a Kubernetes-style API server with its own etcd that
holds replicas of objects every shard must see (APIExports, APIResourceSchemas,
APIExportEndpointSlices, Shards, LogicalClusters, WorkspaceTypes, ClusterRoles
and ClusterRoleBindings), under
/services/cache/shards/<shard|*>/clusters/<cluster|*>/apis/<group>/<version>/<resource>.`,
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := logsapi.ValidateAndApply(logOptions, nil); err != nil {
				return err
			}
			completed, err := o.Complete()
			if err != nil {
				return err
			}
			if errs := completed.Validate(); len(errs) > 0 {
				return utilerrors.NewAggregate(errs)
			}
			return Run(ctx, completed)
		},
	}
	var fss cliflag.NamedFlagSets
	o.AddFlags(&fss)
	logsapi.AddFlags(logOptions, fss.FlagSet("logging"))
	for _, name := range fss.Order {
		cmd.Flags().AddFlagSet(fss.FlagSets[name])
	}
	return cmd
}

// Run starts a cache server and serves until ctx is done.
func Run(ctx context.Context, o options.CompletedOptions) error {
	cfg, err := server.NewConfig(o)
	if err != nil {
		return err
	}
	s, err := cfg.Complete().New(ctx)
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Serving", "url", cfg.ServerURL)
	fmt.Fprintf(os.Stderr, "Tessera cache server serving at %s%s\n", cfg.ServerURL, server.ScopeURL("<shard>", "<cluster>"))
	if cfg.Files.Admin.CertFile != "" {
		fmt.Fprintf(os.Stderr, "export KUBECONFIG=%s\n", cfg.KubeconfigPath())
	}
	return s.Run(ctx)
}
