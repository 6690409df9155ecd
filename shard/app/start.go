// Package app holds the tessera command line.
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

	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/shard/server"
)

// NewCommand returns the tessera root command.
func NewCommand(ctx context.Context) *cobra.Command {
	root := &cobra.Command{
		Use:           "tessera",
		Short:         "Tessera: a sharded, multi-tenant Kubernetes control plane",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newStartCommand(ctx))
	return root
}

func newStartCommand(ctx context.Context) *cobra.Command {
	o := options.NewOptions()
	logOptions := logs.NewOptions()
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start a shard: many logical clusters served by one process and one etcd",
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

// Run starts a shard and serves until ctx is done.
func Run(ctx context.Context, o options.CompletedOptions) error {
	logger := klog.FromContext(ctx)
	cfg, err := server.NewConfig(o)
	if err != nil {
		return err
	}
	s, err := cfg.Complete().New(ctx)
	if err != nil {
		return err
	}
	kubeconfig, err := s.WriteAdminKubeconfig()
	if err != nil {
		return err
	}
	logger.Info("Serving", "url", cfg.ServerURL, "kubeconfig", kubeconfig)
	fmt.Fprintf(os.Stderr, "Tessera shard %q serving at %s\nexport KUBECONFIG=%s\n", o.ShardName, cfg.ServerURL, kubeconfig)
	return s.Run(ctx)
}
