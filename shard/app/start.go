// Package app holds the tessera command line.
package app

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/cli/certscmd"
	"github.com/tessera-dev/tessera/pkg/cli/checkcmd"
	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
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
	root.AddCommand(newStartCommand(ctx), certscmd.NewCommand(), checkcmd.NewCommand())
	return root
}

func newStartCommand(ctx context.Context) *cobra.Command {
	cmd := servercmd.New("start", "Start a shard: many logical clusters served by one process and one etcd", options.NewOptions(), func(completed options.CompletedOptions) error {
		return Run(ctx, completed)
	})
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
