// Package app holds the tessera-virtual-workspaces command line.
package app

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
	"github.com/tessera-dev/tessera/virtual/options"
	"github.com/tessera-dev/tessera/virtual/server"
)

// NewCommand returns the tessera-virtual-workspaces command.
func NewCommand(ctx context.Context) *cobra.Command {
	cmd := servercmd.New("tessera-virtual-workspaces", "Serve the virtual workspaces of a shard as a process of their own", options.NewOptions(), func(completed options.CompletedOptions) error {
		return Run(ctx, completed)
	})
	cmd.Long = `tessera-virtual-workspaces serves the virtual workspaces of one shard
(apiexport and initializingworkspaces) outside of it, as tessera start serves
them in-process:

  /services/apiexport/<export workspace>/<export name>/clusters/<*|consumer>/...
  /services/initializingworkspaces/<initializer>/clusters/<*|name>/...

It reads the shard given by --kubeconfig (a shard admin's) over HTTPS only,
authenticates users by client certificate, by a front-proxy's request headers
or by TokenReviews sent to the shard, and lets the shard decide what they may
do by SubjectAccessReviews in the logical cluster that decides.`
	return cmd
}

// Run starts the server and serves until ctx is done.
func Run(ctx context.Context, o options.CompletedOptions) error {
	cfg, err := server.NewConfig(o)
	if err != nil {
		return err
	}
	s, err := cfg.Complete().New()
	if err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Serving", "url", cfg.ServerURL, "shard", o.ShardName, "shardURL", cfg.Shard.Host)
	fmt.Fprintf(os.Stderr, "Tessera virtual workspaces of shard %q serving at %s%s<export workspace>/<export>/clusters/*\nand %s%s<initializer>/clusters/*\n",
		o.ShardName, cfg.ServerURL, apiexportvw.PathPrefix, cfg.ServerURL, initializingworkspaces.PathPrefix)
	return s.Run(ctx)
}
