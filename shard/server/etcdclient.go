package server

import (
	"context"
	"fmt"
	"net/http"
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

// etcdCheck is a readyz and healthz check: etcd answers a read.
type etcdCheck struct {
	client *clientv3.Client
}

func (etcdCheck) Name() string { return "etcd" }

func (c etcdCheck) Check(req *http.Request) error {
	ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
	defer cancel()
	if _, err := c.client.Get(ctx, "/tessera-health", clientv3.WithCountOnly()); err != nil {
		return fmt.Errorf("etcd does not answer: %w", err)
	}
	return nil
}
