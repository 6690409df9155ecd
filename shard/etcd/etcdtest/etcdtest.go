// Package etcdtest starts an embedded etcd for a test.
package etcdtest

import (
	"testing"

	"github.com/tessera-dev/tessera/shard/etcd"
)

// Start starts an embedded etcd on free ports in a temporary directory,
// without fsync, stops it when the test ends, and returns its client URL.
func Start(t testing.TB) string {
	t.Helper()
	clientPort, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	peerPort, err := etcd.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	e, err := etcd.Start(t.Context(), etcd.Options{Dir: t.TempDir(), ClientPort: clientPort, PeerPort: peerPort, UnsafeNoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e.ClientURL
}
