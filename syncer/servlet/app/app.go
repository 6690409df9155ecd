// Package app holds the tessera-servlet command line.
package app

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tessera-dev/tessera/pkg/cli/servercmd"
	"github.com/tessera-dev/tessera/syncer/servlet"
	"github.com/tessera-dev/tessera/syncer/servlet/options"
)

// NewCommand returns the tessera-servlet command.
func NewCommand(ctx context.Context) *cobra.Command {
	cmd := servercmd.New("tessera-servlet", "Publish a service cluster's CRDs into the platform and sync their objects", options.NewOptions(), func(o options.Completed) error {
		cfg, err := o.Config()
		if err != nil {
			return err
		}
		return servlet.Run(ctx, cfg)
	})
	cmd.Long = `tessera-servlet runs on a service cluster (usually as a Deployment) and
makes some of its CustomResourceDefinitions APIs of the platform:

  - it applies the PublishedResource CRD (services.kdp.k8c.io) on the
    service cluster and the Service CRD (core.kdp.k8c.io) in the platform
    workspace of --platform-kubeconfig;
  - each valid PublishedResource becomes an APIResourceSchema, projected
    into the API group of the Service --service-name, and the APIExport
    named after that group lists them all;
  - objects that consumers create in workspaces binding that export are
    synced down to the service cluster under the PublishedResource's
    naming, their status and related Secrets/ConfigMaps synced back;
  - replicas elect a leader through the Lease --namespace/--lease-name.`
	return cmd
}
