// Package kcp is Tessera's kubectl kcp plugin: the kcp plugin commands kcp
// users run, on Tessera (ws, crd snapshot, bind apiexport and compute,
// workload sync, cordon and uncordon).
package kcp

import (
	"github.com/spf13/cobra"

	"github.com/tessera-dev/tessera/pkg/cli/bind"
	"github.com/tessera-dev/tessera/pkg/cli/crd"
	"github.com/tessera-dev/tessera/pkg/cli/workload"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
)

// NewCommand returns the kubectl kcp command with its subcommands.
func NewCommand(streams workspace.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "kcp",
		Short:             "kcp's kubectl plugin commands, for Tessera",
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl kcp"},
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.AddCommand(bind.NewCommand(), crd.NewCommand(), workload.NewCommand(), workspace.NewCommand(streams))
	return cmd
}
