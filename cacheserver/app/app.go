// Package app holds the tessera-cache-server command line.
package app

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/cacheserver/options"
	"github.com/tessera-dev/tessera/cacheserver/server"
	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
)

// NewCommand returns the tessera-cache-server command.
func NewCommand(ctx context.Context) *cobra.Command {
	cmd := servercmd.New("tessera-cache-server", "Serve the replicas of the objects every shard must see", options.NewOptions(), func(completed options.CompletedOptions) error {
		return Run(ctx, completed)
	})
	cmd.Long = `tessera-cache-server is a Kubernetes-style API server with its own etcd that
holds replicas of objects every shard must see (APIExports, APIResourceSchemas,
APIExportEndpointSlices, Shards, LogicalClusters, WorkspaceTypes, ClusterRoles
and ClusterRoleBindings), under
/services/cache/shards/<shard|*>/clusters/<cluster|*>/apis/<group>/<version>/<resource>.`
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
