package storage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/logutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"go.uber.org/zap"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
)

// Timeouts of the shard's etcd clients, as the apiserver's storage factory
// uses them.
const (
	etcdDialTimeout      = 20 * time.Second
	etcdKeepaliveTime    = 30 * time.Second
	etcdKeepaliveTimeout = 10 * time.Second
)

// NewEtcdClient connects to the etcd of c and waits until the connection
// is ready or ctx ends; the client outlives ctx.
func NewEtcdClient(ctx context.Context, c storagebackend.TransportConfig) (*kubernetes.Client, error) {
	cfg := clientv3.Config{
		Context:              context.WithoutCancel(ctx),
		DialTimeout:          etcdDialTimeout,
		DialKeepAliveTime:    etcdKeepaliveTime,
		DialKeepAliveTimeout: etcdKeepaliveTimeout,
		Endpoints:            c.ServerList,
	}
	if c.CertFile != "" || c.KeyFile != "" || c.TrustedCAFile != "" {
		tlsInfo := transport.TLSInfo{CertFile: c.CertFile, KeyFile: c.KeyFile, TrustedCAFile: c.TrustedCAFile}
		tlsConfig, err := tlsInfo.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd client TLS: %w", err)
		}
		cfg.TLS = tlsConfig
	}
	logger, err := logutil.CreateDefaultZapLogger(zap.ErrorLevel)
	if err != nil {
		return nil, fmt.Errorf("etcd client logger: %w", err)
	}
	cfg.Logger = logger
	client, err := kubernetes.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to etcd at %v: %w", c.ServerList, err)
	}
	dialCtx, cancel := context.WithTimeout(ctx, etcdDialTimeout)
	defer cancel()
	if _, err := client.Client.Get(dialCtx, "/", clientv3.WithLimit(1), clientv3.WithKeysOnly()); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("connecting to etcd at %v: %w", c.ServerList, err)
	}
	return client, nil
}

// SharedEtcdClient builds raw etcd3 stores on one etcd client and
// compactor, connected on first use and closed when the last store built on
// it is destroyed; the zero value is ready. The apiserver's storage factory
// (generic.NewRawStorage) opens a client per store instead.
type SharedEtcdClient struct{ etcd sharedEtcd }

// NewRawStorage is generic.NewRawStorage on the shared client.
func (c *SharedEtcdClient) NewRawStorage(config *storagebackend.ConfigForResource, newFunc, newListFunc func() runtime.Object, resourcePrefix string) (storage.Interface, factory.DestroyFunc, error) {
	return onShared(&c.etcd)(config, newFunc, newListFunc, resourcePrefix)
}

// sharedEtcd is the one etcd client (and compactor) of the built-in stores
// of a RESTOptionsGetter. The apiserver's storage factory opens a client
// per resource, each a gRPC connection with its goroutines, buffers and
// keepalives: about a hundred for a shard. All stores share one here; it
// is closed when the last store built on it is destroyed.
type sharedEtcd struct {
	mu        sync.Mutex
	client    *kubernetes.Client
	compactor interface {
		etcd3.Compactor
		Stop()
	}
	refs int
}

// acquire returns the shared client, connecting on first use, the
// compactor (nil when compaction is off) and the release of this use.
func (s *sharedEtcd) acquire(c *storagebackend.ConfigForResource) (*kubernetes.Client, etcd3.Compactor, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		client, err := NewEtcdClient(context.Background(), c.Transport)
		if err != nil {
			return nil, nil, nil, err
		}
		// Request latencies per operation, as the factory's clients have.
		client.KV = etcd3.NewETCDLatencyTracker(client.KV)
		s.client = client
		if c.CompactionInterval > 0 {
			s.compactor = etcd3.StartCompactorPerEndpoint(client.Client, c.CompactionInterval)
		}
	}
	s.refs++
	var compactor etcd3.Compactor
	if s.compactor != nil {
		compactor = s.compactor
	}
	var once sync.Once
	return s.client, compactor, func() { once.Do(s.release) }, nil
}

func (s *sharedEtcd) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refs--
	if s.refs > 0 || s.client == nil {
		return
	}
	if s.compactor != nil {
		s.compactor.Stop()
		s.compactor = nil
	}
	_ = s.client.Close()
	s.client = nil
}
