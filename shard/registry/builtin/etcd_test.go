package builtin

import (
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// startEtcd starts an embedded single-member etcd for the test and returns
// the storage configuration of a client of it. The server stops when the
// test ends.
func startEtcd(t *testing.T) *storagebackend.Config {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.UnsafeNoFsync = true // a throwaway member never restarts
	// Shutting down logs errors about closed listeners; keep test output
	// for the tests.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	clientURL := url.URL{Scheme: "http", Host: freeAddress(t)}
	peerURL := url.URL{Scheme: "http", Host: freeAddress(t)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{clientURL}, []url.URL{clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peerURL}, []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	t.Cleanup(etcd.Close)
	select {
	case <-etcd.Server.ReadyNotify():
	case err := <-etcd.Err():
		t.Fatalf("etcd failed: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("etcd took too long to start")
	}

	config := storagebackend.NewDefaultConfig("/registry", nil)
	config.Type = storagebackend.StorageTypeETCD3
	config.Transport.ServerList = []string{clientURL.String()}
	return config
}

// freeAddress returns a localhost address with a port nobody listens on.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
}
