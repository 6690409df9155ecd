// Package physicale2e checks the physical clusters the e2e suite gets from
// its provider (kwok-backed API servers here, kind where Docker runs): they
// run workloads, take Helm charts, and stay on loopback.
package physicale2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("physical")

func TestPhysical(t *testing.T) {
	framework.RunSuite(t, "Physical clusters e2e")
}

// clusters is how many physical clusters this suite uses; they start in
// parallel on first use and are shared by its specs.
const clusters = 2
