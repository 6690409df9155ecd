package server

import (
	"fmt"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
)

// newEtcdClient connects to the shard's etcd for the work that is done on
// key ranges rather than objects (deleting a logical cluster's data).
func newEtcdClient(t storagebackend.TransportConfig) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: t.ServerList, DialTimeout: 20 * time.Second}
	if t.CertFile != "" || t.TrustedCAFile != "" {
		info := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.TrustedCAFile}
		tlsConfig, err := info.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd client TLS: %w", err)
		}
		cfg.TLS = tlsConfig
	}
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd %v: %w", t.ServerList, err)
	}
	return c, nil
}

func clientCountOnly() []clientv3.OpOption {
	return []clientv3.OpOption{clientv3.WithCountOnly()}
}
