// Command tessera-cache-server runs a Tessera cache server.
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/tessera-dev/tessera/cacheserver/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}
