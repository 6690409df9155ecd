// Package sharde2e runs the shard's scenarios end to end against the
// tessera process, over HTTPS, with client-go, the dynamic client and the
// real kubectl.
package sharde2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("shard")

func TestShard(t *testing.T) {
	framework.RunSuite(t, "Shard e2e")
}
