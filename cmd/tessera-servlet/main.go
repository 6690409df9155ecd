// Command tessera-servlet publishes CustomResourceDefinitions of a service
// cluster into the platform and syncs their objects (PublishedResource).
package main

import (
	"os"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"

	"github.com/tessera-dev/tessera/syncer/servlet/app"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	os.Exit(cli.Run(app.NewCommand(ctx)))
}
