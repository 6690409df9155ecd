// Package servlete2e runs tessera-servlet for real: a Tessera shard, a
// kwok-backed service cluster (real kube-apiserver) with a cert-manager-like
// Certificate CRD, and the tessera-servlet binary as a process that
// publishes it into a provider workspace as Zertifikat and syncs the
// objects of consumer workspaces (one, then 100 at once). A fixture
// controller in the test process plays the service's controller
// (cert-manager: status and the Secret), since kwok runs no containers.
package servlete2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("servlet")

func TestServlet(t *testing.T) {
	framework.RunSuite(t, "Servlet e2e")
}
