package v1alpha1

import (
	"crypto/sha256"
	"math/big"
)

// ToSyncTargetKey is the key of the SyncTarget name in logical cluster
// cluster, as kcp computes it: the SHA-224 of "<cluster>:<name>" in base
// 62. Syncers, labels (state.workload.kcp.io/<key>) and downstream names
// use it, so it must stay what kcp's is.
func ToSyncTargetKey(cluster, name string) string {
	sum := sha256.Sum224([]byte(cluster + ":" + name))
	var i big.Int
	i.SetBytes(sum[:])
	return i.Text(62)
}
