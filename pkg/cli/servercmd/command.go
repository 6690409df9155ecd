// Package servercmd builds the cobra command of a Tessera server binary
// (tessera start, tessera-cache-server, tessera-front-proxy,
// tessera-virtual-workspaces): its options' flags in named sets with the
// logging flags, and on run: logging applied, options completed and
// validated (all errors at once), then the server run.
package servercmd

import (
	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
)

// Completed are completed options.
type Completed interface {
	Validate() []error
}

// Options are a server's options before completion.
type Options[C Completed] interface {
	AddFlags(*cliflag.NamedFlagSets)
	Complete() (C, error)
}

// New returns a command named use that runs run with o completed and
// validated. Set Long and the like on the result.
func New[C Completed](use, short string, o Options[C], run func(C) error) *cobra.Command {
	logOptions := logs.NewOptions()
	cmd := &cobra.Command{
		Use:          use,
		Short:        short,
		SilenceUsage: true,
		Args:         cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
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
			return run(completed)
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
