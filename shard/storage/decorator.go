package storage

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// Decorator returns a generic.StorageDecorator that serves all logical
// clusters from one etcd3 store per resource, with one upstream watch cache
// per resource in front of it when cached is true.
func Decorator(cached bool) generic.StorageDecorator {
	return func(
		config *storagebackend.ConfigForResource,
		resourcePrefix string,
		keyFunc func(obj runtime.Object) (string, error),
		newFunc func() runtime.Object,
		newListFunc func() runtime.Object,
		getAttrsFunc storage.AttrFunc,
		triggerFuncs storage.IndexerFuncs,
		indexers *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		raw, destroyRaw, err := generic.NewRawStorage(config, newFunc, newListFunc, resourcePrefix)
		if err != nil {
			return nil, nil, err
		}
		var s storage.Interface = &annotating{Interface: raw, prefix: resourcePrefix}
		destroy := destroyRaw
		if cached {
			// Cache audit (issue 9): cluster-keyed: one watch cache per
			// resource, keyed by CacheKeyFunc (the cluster is in the key).
			cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
				Storage:             s,
				Versioner:           storage.APIObjectVersioner{},
				GroupResource:       config.GroupResource,
				EventsHistoryWindow: config.EventsHistoryWindow,
				ResourcePrefix:      resourcePrefix,
				KeyFunc:             CacheKeyFunc(resourcePrefix, keyFunc),
				NewFunc:             newFunc,
				NewListFunc:         newListFunc,
				GetAttrsFunc:        withClusterField(getAttrsFunc),
				// The cacher takes one trigger; the cluster is the one
				// every resource of a shard needs (no built-in registry
				// brings its own).
				IndexerFuncs: clusterTrigger,
				Indexers:     indexers,
				Codec:        config.Codec,
			})
			if err != nil {
				destroyRaw()
				return nil, nil, fmt.Errorf("creating the watch cache for %s: %w", config.GroupResource, err)
			}
			delegator := cacherstorage.NewCacheDelegator(cacher, s)
			s = delegator
			var once sync.Once
			destroy = func() {
				once.Do(func() {
					delegator.Stop()
					cacher.Stop()
					destroyRaw()
				})
			}
		}
		return &scoped{Interface: s, prefix: resourcePrefix}, destroy, nil
	}
}

// CacheKeyFunc turns the registry's object key function, which knows nothing
// of clusters, into one that yields the cluster-aware key under which the
// object is stored, using the object's kcp.io/cluster annotation.
func CacheKeyFunc(prefix string, keyFunc func(obj runtime.Object) (string, error)) func(obj runtime.Object) (string, error) {
	return func(obj runtime.Object) (string, error) {
		key, err := keyFunc(obj)
		if err != nil {
			return "", err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		cluster := logicalcluster.From(m)
		if cluster == "" {
			return "", fmt.Errorf("object %s of %s has no %s annotation", strings.TrimPrefix(key, prefix), prefix, logicalcluster.AnnotationKey)
		}
		return clusterKey(prefix, cluster, key)
	}
}

// ClusterAware wraps a raw etcd3 store with the cluster-aware layers, without
// a watch cache (used for custom resources, whose stores share one etcd
// client).
func ClusterAware(raw storage.Interface, resourcePrefix string) storage.Interface {
	return &scoped{Interface: &annotating{Interface: raw, prefix: resourcePrefix}, prefix: resourcePrefix}
}
