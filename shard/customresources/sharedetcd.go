package customresources

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
	"k8s.io/apiserver/pkg/registry/generic"
	genericstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/shard/storage"
)

// ClusterLayers wraps a raw etcd3 store of a resource prefix with the
// cluster-aware layers (key scoping from the request context, the
// kcp.io/cluster annotation); shard/storage provides them.
type ClusterLayers func(raw genericstorage.Interface, resourcePrefix string) genericstorage.Interface

// SharedEtcd builds the stores of custom resources on one etcd client.
// generic.NewRawStorage creates an etcd client (a gRPC connection and its
// goroutines) per store, and a store exists per logical cluster, CRD and
// version: too costly. An etcd3 store on a shared client is a small struct.
type SharedEtcd struct {
	client    *kubernetes.Client
	caches    *watchCaches
	closeOnce sync.Once
}

// Timeouts of the shared etcd client, as the apiserver's storage factory
// uses them.
const (
	etcdDialTimeout      = 20 * time.Second
	etcdKeepaliveTime    = 30 * time.Second
	etcdKeepaliveTimeout = 10 * time.Second
)

// NewSharedEtcd connects to etcd and waits until the connection is ready or
// ctx ends.
func NewSharedEtcd(ctx context.Context, c storagebackend.TransportConfig) (*SharedEtcd, error) {
	cfg := clientv3.Config{
		// The client outlives ctx, which only bounds connecting.
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
	return &SharedEtcd{client: client, caches: newWatchCaches(client)}, nil
}

// Close closes the client. Stores built on it fail afterwards.
func (s *SharedEtcd) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.caches.close()
		err = s.client.Close()
	})
	return err
}

// Decorator returns a generic.StorageDecorator that builds an etcd3 store
// on the shared client and wraps it with layers. Destroying such a store
// leaves the client open. It puts no watch cache in front of the store.
func (s *SharedEtcd) Decorator(layers ClusterLayers) generic.StorageDecorator {
	return func(
		config *storagebackend.ConfigForResource,
		resourcePrefix string,
		_ func(obj runtime.Object) (string, error),
		newFunc func() runtime.Object,
		newListFunc func() runtime.Object,
		_ genericstorage.AttrFunc,
		_ genericstorage.IndexerFuncs,
		_ *cache.Indexers,
	) (genericstorage.Interface, factory.DestroyFunc, error) {
		transformer := config.Transformer
		if transformer == nil {
			transformer = identity.NewEncryptCheckTransformer()
		}
		versioner := genericstorage.APIObjectVersioner{}
		// No compactor: only a watch cache asks for the compacted revision.
		store, err := etcd3.New(s.client, nil, config.Codec, newFunc, newListFunc, config.Prefix, resourcePrefix,
			config.GroupResource, transformer, config.LeaseManagerConfig, etcd3.NewDefaultDecoder(config.Codec, versioner), versioner)
		if err != nil {
			return nil, nil, fmt.Errorf("creating the etcd3 store of %s: %w", config.GroupResource, err)
		}
		var once sync.Once
		return layers(store, resourcePrefix), func() { once.Do(store.Close) }, nil
	}
}

// CachingDecorator returns a generic.StorageDecorator like Decorator whose
// stores serve lists, watches and gets with a resourceVersion from one
// watch cache per group/resource, shared by all logical clusters and CRDs
// of that name (storage.CachedClusterAware): the cache holds objects as
// stored, and each store converts, prunes and defaults them by its own CRD
// on the way out (its codec's FromStored). A cache starts with the first
// list or watch of its group/resource and stops once unused for
// DefaultWatchCacheIdle (Run sweeps). Stores whose codec has no FromStored
// are not cached.
func (s *SharedEtcd) CachingDecorator() generic.StorageDecorator {
	uncached := s.Decorator(storage.ClusterAware)
	return func(
		config *storagebackend.ConfigForResource,
		resourcePrefix string,
		keyFunc func(obj runtime.Object) (string, error),
		newFunc func() runtime.Object,
		newListFunc func() runtime.Object,
		attrs genericstorage.AttrFunc,
		triggers genericstorage.IndexerFuncs,
		indexers *cache.Indexers,
	) (genericstorage.Interface, factory.DestroyFunc, error) {
		codec, ok := config.Codec.(interface {
			FromStored(stored, into runtime.Object) error
		})
		if !ok {
			return uncached(config, resourcePrefix, keyFunc, newFunc, newListFunc, attrs, triggers, indexers)
		}
		source := s.caches.source(config, resourcePrefix)
		return s.Decorator(func(raw genericstorage.Interface, prefix string) genericstorage.Interface {
			return storage.CachedClusterAware(raw, prefix, source, codec.FromStored, newFunc, newListFunc)
		})(config, resourcePrefix, keyFunc, newFunc, newListFunc, attrs, triggers, indexers)
	}
}

// Run stops the watch caches that are no longer used until ctx ends, then
// all of them.
func (s *SharedEtcd) Run(ctx context.Context) { s.caches.run(ctx) }
