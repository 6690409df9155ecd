// Package app holds the tessera-front-proxy command line.
package app

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tessera-dev/tessera/frontproxy/options"
	"github.com/tessera-dev/tessera/frontproxy/server"
	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
)

// NewCommand returns the tessera-front-proxy command.
func NewCommand(ctx context.Context) *cobra.Command {
	cmd := servercmd.New("tessera-front-proxy", "One URL for a Tessera installation: authenticates clients and routes /clusters/<workspace path> to the shard serving it", options.NewOptions(), func(completed options.CompletedOptions) error {
		return Run(ctx, completed)
	})
	return cmd
}

// Run starts the front-proxy and serves until ctx is done.
func Run(ctx context.Context, o options.CompletedOptions) error {
	cfg, err := server.NewConfig(o)
	if err != nil {
		return err
	}
	return cfg.Complete().New().Run(ctx)
}
