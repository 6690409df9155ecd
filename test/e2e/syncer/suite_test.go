// Package syncere2e runs the compute quickstart for real: a Tessera shard
// with the compute battery, two kwok-backed physical clusters (real
// kube-apiserver, controllers and scheduler; kwok runs the pods), the real
// kubectl and plugins, and tessera-syncer processes that stand in for the
// syncer pods kwok cannot run, configured from the manifests `kubectl kcp
// workload sync` writes and authorized downstream by the RBAC those
// manifests create.
package syncere2e

import (
	"testing"

	"github.com/tessera-dev/tessera/test/e2e/framework"
)

var env = framework.Setup("syncer")

// heartbeatThreshold is the shard's --sync-target-heartbeat-threshold here:
// short, so that a lost physical cluster is noticed within the spec.
const heartbeatThreshold = "10s"

func TestSyncer(t *testing.T) {
	env.TesseraArgs = []string{
		"--batteries-included=root-compute-workspace",
		"--sync-target-heartbeat-threshold=" + heartbeatThreshold,
	}
	framework.RunSuite(t, "Syncer e2e")
}
