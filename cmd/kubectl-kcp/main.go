// Command kubectl-kcp is the kubectl kcp plugin: with it on PATH, "kubectl
// kcp crd snapshot" turns CRDs into APIResourceSchemas, "kubectl kcp bind
// apiexport" binds an APIExport into the current workspace, "kubectl kcp
// workload sync" connects a physical cluster and "kubectl kcp ws" is
// kubectl ws.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tessera-dev/tessera/pkg/cli/kcp"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := workspace.Run(ctx, kcp.NewCommand(workspace.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
	stop()
	os.Exit(code)
}
