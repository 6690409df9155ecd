// Command tessera-syncer syncs the workloads a workspace schedules to a
// SyncTarget onto a physical cluster, and their status back.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/tessera-dev/tessera/syncer/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}
