// Command kubectl-ws is the kubectl ws plugin: with it on PATH, "kubectl ws"
// shows, switches between, creates and lists workspaces.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tessera-dev/tessera/pkg/cli/workspace"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := workspace.Run(ctx, workspace.NewCommand(workspace.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
	stop()
	os.Exit(code)
}
