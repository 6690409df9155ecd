// Package realclustere2e checks the physical cluster whose pods really run
// (provider real, see test/e2e/framework/physical/real.go): an image built
// here runs as a Deployment reached from this machine through its Service,
// a pod resolves a Service by DNS name, and a StatefulSet keeps its data on
// a PersistentVolumeClaim of the default StorageClass across a pod delete.
package realclustere2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("realcluster")

func TestRealCluster(t *testing.T) {
	framework.RunSuite(t, "Real cluster e2e")
}
