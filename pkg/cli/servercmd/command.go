// Package servercmd builds the cobra command of a Tessera server binary
// (tessera start, tessera-cache-server, tessera-front-proxy,
// tessera-virtual-workspaces): its options' flags in named sets with the
// logging flags, and on run: logging applied, options completed and
// validated (all errors at once), then the server run.
package servercmd

import (
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	AddFlagsTo(cmd.Flags(), func(fss *cliflag.NamedFlagSets) {
		o.AddFlags(fss)
		logsapi.AddFlags(logOptions, fss.FlagSet("logging"))
	})
	return cmd
}

// AddFlagsTo adds the named flag sets addFlags registers to fs (for tests
// and embedding).
func AddFlagsTo(fs *pflag.FlagSet, addFlags func(*cliflag.NamedFlagSets)) {
	var fss cliflag.NamedFlagSets
	addFlags(&fss)
	for _, name := range fss.Order {
		fs.AddFlagSet(fss.FlagSets[name])
	}
}

// ExternalHostname is the host name clients use when none is given: the
// bind address, or 127.0.0.1 for an unspecified one (0.0.0.0, ::).
func ExternalHostname(given, bindAddress string) string {
	if given != "" {
		return given
	}
	if ip := net.ParseIP(bindAddress); ip != nil && ip.IsUnspecified() {
		return "127.0.0.1"
	}
	return bindAddress
}
