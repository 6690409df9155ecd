// Package app holds the tessera-front-proxy command line.
package app

import (
	"context"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/tessera-dev/tessera/frontproxy/options"
	"github.com/tessera-dev/tessera/frontproxy/server"
)

// NewCommand returns the tessera-front-proxy command.
func NewCommand(ctx context.Context) *cobra.Command {
	o := options.NewOptions()
	logOptions := logs.NewOptions()
	cmd := &cobra.Command{
		Use:          "tessera-front-proxy",
		Short:        "One URL for a Tessera installation: authenticates clients and routes /clusters/<workspace path> to the shard serving it",
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

// Run starts the front-proxy and serves until ctx is done.
func Run(ctx context.Context, o options.CompletedOptions) error {
	cfg, err := server.NewConfig(o)
	if err != nil {
		return err
	}
	return cfg.Complete().New().Run(ctx)
}
