// Package workspace is the kubectl ws plugin: it shows, switches between,
// creates and lists workspaces by editing the kubeconfig the way kcp's
// kubectl ws does. cmd/kubectl-ws only runs NewCommand.
package workspace

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// IOStreams are the streams a command reads from and writes to.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// defaultTimeout is how long commands wait for a workspace to become ready.
const defaultTimeout = time.Minute

// NewCommand returns the kubectl ws command with its subcommands. It keeps
// no state between runs outside the kubeconfig it edits, so tests may build
// and execute as many as they like. Errors are returned, not printed: use
// Run to execute it like kubectl would.
func NewCommand(streams IOStreams) *cobra.Command {
	kflags := &kubeconfigFlags{}
	rootUse := &useOptions{timeout: defaultTimeout, homeDir: os.UserHomeDir}

	cmd := &cobra.Command{
		Use:   "ws [. | .. | - | ~ | <name> | <root:path>]",
		Short: "Show, switch between, create and list workspaces",
		Long: `Show, switch between, create and list workspaces.

The current workspace is the one the kubeconfig's current context points to.
Switching writes the context and cluster "` + CurrentContextName + `" with the
new workspace URL, keeps the one switched away from as "` + PreviousContextName + `",
and makes "` + CurrentContextName + `" the current context.`,
		Example: `  # Print the current workspace.
  kubectl ws .

  # Enter the child workspace "a" of the current workspace.
  kubectl ws a

  # Enter a workspace by its absolute path, go up, and go back.
  kubectl ws root:a:b
  kubectl ws ..
  kubectl ws -

  # Enter the home workspace.
  kubectl ws

  # Create a workspace, wait for it to be ready and enter it.
  kubectl ws create a --type root:organization --enter`,
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl ws"},
		Args:              cobra.MaximumNArgs(1),
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := newSession(kflags, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			arg := ""
			if len(args) > 0 {
				arg = args[0]
			}
			return rootUse.run(cmd.Context(), s, arg)
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w\nSee '%s --help' for usage", err, c.CommandPath())
	})
	kflags.addFlags(cmd.PersistentFlags())
	addUseFlags(cmd, rootUse)

	cmd.AddCommand(
		newUseCommand(kflags),
		newCurrentCommand(kflags),
		newCreateCommand(kflags),
		newTreeCommand(kflags),
	)
	return cmd
}

// Run executes cmd with ctx and returns the process exit code. An error is
// printed to the command's error stream as "error: <message>", as kubectl
// does.
func Run(ctx context.Context, cmd *cobra.Command) int {
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "error: %v\n", err)
		return 1
	}
	return 0
}

func addUseFlags(cmd *cobra.Command, o *useOptions) {
	cmd.Flags().BoolVar(&o.short, "short", o.short, "Print only the path of the workspace, e.g. for a shell prompt.")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the home workspace to become ready.")
}

func newUseCommand(kflags *kubeconfigFlags) *cobra.Command {
	o := &useOptions{timeout: defaultTimeout, homeDir: os.UserHomeDir}
	cmd := &cobra.Command{
		Use:   "use (. | .. | - | ~ | <name> | <root:path>)",
		Short: "Switch to a workspace; the same as kubectl ws <arg>",
		Long: `Switch to a workspace; the same as kubectl ws <arg>, also for workspaces
named like a subcommand.

  <name>       a child of the current workspace, which must be Ready
  <root:path>  an absolute path, e.g. root or root:a:b
  ..           the parent of the current workspace
  -            the previous workspace
  ~            the home workspace
  .            print the current workspace`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := newSession(kflags, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, args[0])
		},
	}
	addUseFlags(cmd, o)
	return cmd
}

func newCurrentCommand(kflags *kubeconfigFlags) *cobra.Command {
	short := false
	cmd := &cobra.Command{
		Use:   "current",
		Short: "Print the current workspace; the same as kubectl ws .",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := newSession(kflags, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			return printCurrentWorkspace(s, short)
		},
	}
	cmd.Flags().BoolVar(&short, "short", short, "Print only the path of the workspace, e.g. for a shell prompt.")
	return cmd
}

func newCreateCommand(kflags *kubeconfigFlags) *cobra.Command {
	o := &createOptions{timeout: defaultTimeout}
	cmd := &cobra.Command{
		Use:   "create <name>",
		Short: "Create a workspace in the current workspace",
		Long: `Create a workspace in the current workspace and wait for it to be ready.

The type defaults to the default child type of the current workspace's type.`,
		Example: `  # Create an organization workspace and enter it.
  kubectl ws create a --type root:organization --enter

  # Create a workspace unless it exists.
  kubectl ws create b --ignore-existing`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := newSession(kflags, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), s, args[0])
		},
	}
	cmd.Flags().StringVar(&o.typ, "type", o.typ, "The type of the workspace, as [path:]name (e.g. root:universal); everything before the last ':' is the path.")
	cmd.Flags().BoolVar(&o.enter, "enter", o.enter, "Switch to the workspace once it is ready.")
	cmd.Flags().BoolVar(&o.ignoreExisting, "ignore-existing", o.ignoreExisting, "Do not fail if the workspace exists (it still fails if it has a different type).")
	cmd.Flags().StringVar(&o.locationSelector, "location-selector", o.locationSelector, "A label selector of the shards the workspace may be scheduled onto, e.g. region=eu or 'region=eu,tier in (gold,silver)'.")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the workspace to become ready; 0 does not wait.")
	return cmd
}

func newTreeCommand(kflags *kubeconfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "tree",
		Short: "Print the tree of workspaces below the current workspace",
		Long: `Print the tree of workspaces below the current workspace. Only Ready
workspaces are descended into; levels the caller may not list show no children.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := newSession(kflags, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			return tree(cmd.Context(), s)
		},
	}
}
