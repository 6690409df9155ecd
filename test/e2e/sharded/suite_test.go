// Package shardede2e runs a sharded installation (a cache server, the root
// shard, shard-1 and shard-2, a virtual workspaces server per shard, and a
// front-proxy; test/e2e/framework/sharded) and drives it through the
// front-proxy with the real kubectl and the kubectl ws and kcp plugins.
package shardede2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("sharded")

func TestSharded(t *testing.T) {
	framework.RunSuite(t, "Sharded e2e")
}
