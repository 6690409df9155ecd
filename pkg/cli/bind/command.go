// Package bind is the kubectl kcp bind command: `bind apiexport` creates an
// APIBinding to an APIExport in the current workspace and waits until it is
// bound, as kcp's does; `bind compute` binds compute services' exports and
// creates a Placement, as kcp's TMC plugin did.
package bind

import (
	"time"

	"github.com/spf13/cobra"
)

// pollInterval is how often `bind apiexport` reads the APIBinding while it
// waits, as kcp's plugin does.
const pollInterval = 500 * time.Millisecond

// NewCommand returns the bind command with its apiexport and compute
// subcommands.
func NewCommand() *cobra.Command {
	return newCommand(pollInterval)
}

func newCommand(interval time.Duration) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bind",
		Short: "Bind APIs into the current workspace",
		Args:  cobra.NoArgs,
		// Errors are printed once, by the caller (workspace.Run).
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newAPIExportCommand(interval), newComputeCommand(interval))
	return cmd
}

func newAPIExportCommand(interval time.Duration) *cobra.Command {
	o := &apiExportOptions{timeout: 30 * time.Second, interval: interval}
	cmd := &cobra.Command{
		Use:   "apiexport [<workspace-path>:]<apiexport-name>",
		Short: "Bind to an APIExport",
		Long: `Create an APIBinding to an APIExport in the current workspace and wait until
it is bound, that is until its status.phase is Bound.

The argument is the path of the APIExport's workspace and the APIExport's
name, joined by the last ':' (root:my-service:my-export). A name alone is an
APIExport of the current workspace. The APIBinding is named like the
APIExport unless --name is given.

Permission claims the APIExport makes are answered with
--accept-permission-claim and --reject-permission-claim as <resource>.<group>,
with "core" for the core group (configmaps.core), or all at once with
--accept-all-permission-claims or --reject-all-permission-claims.`,
		Example: `  # Bind to the APIExport "my-export" of the workspace root:my-service, as the
  # APIBinding "my-binding".
  kubectl kcp bind apiexport root:my-service:my-export --name my-binding

  # Bind to the APIExport "wildwest.dev" of root:wildwest:cowboys-service and
  # accept its claims on Secrets and ConfigMaps.
  kubectl kcp bind apiexport root:wildwest:cowboys-service:wildwest.dev --accept-permission-claim secrets.core,configmaps.core

  # Bind to the APIExport "my-export" of the current workspace and reject its
  # claim on Secrets.
  kubectl kcp bind apiexport my-export --reject-permission-claim secrets.core`,
		Args:          cobra.MaximumNArgs(1),
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := ""
			if len(args) > 0 {
				ref = args[0]
			}
			return o.run(cmd.Context(), cmd.OutOrStdout(), ref)
		},
	}
	o.client.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.name, "name", o.name, "Name of the APIBinding to create (default: the name of the APIExport).")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the APIBinding to be bound.")
	cmd.Flags().StringSliceVar(&o.accept, "accept-permission-claim", nil, "Permission claims to accept, as <resource>.<group> (core for the core group); repeat the flag or separate them by commas.")
	cmd.Flags().StringSliceVar(&o.reject, "reject-permission-claim", nil, "Permission claims to reject, as <resource>.<group> (core for the core group); repeat the flag or separate them by commas.")
	cmd.Flags().BoolVar(&o.acceptAll, "accept-all-permission-claims", false, "Accept all permission claims of the APIExport.")
	cmd.Flags().BoolVar(&o.rejectAll, "reject-all-permission-claims", false, "Reject all permission claims of the APIExport.")
	return cmd
}
