// Package deploye2e checks the Helm chart (deploy/charts/tessera) and the
// images: the chart's templates and schema without a cluster, then a real
// installation into a cluster whose pods run, used through its
// front-proxy with kubectl.
package deploye2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("deploy")

func TestDeploy(t *testing.T) {
	framework.RunSuite(t, "Deploy e2e")
}
