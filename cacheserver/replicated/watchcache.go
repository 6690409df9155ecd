package replicated

import (
	"fmt"
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

// cachingDecorator puts one upstream watch cache per resource, for every
// shard and cluster, in front of the resource's etcd3 storage: lists and
// watches with a resourceVersion (and consistent lists) are served from
// it, with periodic bookmarks; what it cannot serve goes to etcd. The cache
// keys objects by their etcd key, derived from the kcp.io/shard and
// kcp.io/cluster annotations that every write stamps.
func cachingDecorator(
	config *storagebackend.ConfigForResource,
	resourcePrefix string,
	_ func(obj runtime.Object) (string, error),
	newFunc func() runtime.Object,
	newListFunc func() runtime.Object,
	getAttrsFunc storage.AttrFunc,
	_ storage.IndexerFuncs,
	indexers *cache.Indexers,
) (storage.Interface, factory.DestroyFunc, error) {
	raw, destroyRaw, err := generic.NewRawStorage(config, newFunc, newListFunc, resourcePrefix)
	if err != nil {
		return nil, nil, err
	}
	s := noWatchList{Interface: raw}
	cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
		Storage:             s,
		Versioner:           storage.APIObjectVersioner{},
		GroupResource:       config.GroupResource,
		EventsHistoryWindow: config.EventsHistoryWindow,
		ResourcePrefix:      resourcePrefix,
		KeyFunc:             objectKey(resourcePrefix),
		NewFunc:             newFunc,
		NewListFunc:         newListFunc,
		GetAttrsFunc:        getAttrsFunc,
		Indexers:            indexers,
		Codec:               config.Codec,
	})
	if err != nil {
		destroyRaw()
		return nil, nil, fmt.Errorf("creating the watch cache of %s: %w", config.GroupResource, err)
	}
	delegator := cacherstorage.NewCacheDelegator(cacher, s)
	var once sync.Once
	return delegator, func() {
		once.Do(func() {
			delegator.Stop()
			cacher.Stop()
			destroyRaw()
		})
	}, nil
}

// objectKey is the etcd key of a stored replica, from its annotations:
// <prefix>/<shard>/<cluster>/<name>.
func objectKey(prefix string) func(obj runtime.Object) (string, error) {
	return func(obj runtime.Object) (string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		a := m.GetAnnotations()
		shard, cluster := a[ShardAnnotationKey], a[logicalcluster.AnnotationKey]
		if shard == "" || cluster == "" {
			return "", fmt.Errorf("replica %q under %s has no %s or %s annotation", m.GetName(), prefix, ShardAnnotationKey, logicalcluster.AnnotationKey)
		}
		return prefix + "/" + shard + "/" + cluster + "/" + m.GetName(), nil
	}
}

// noWatchList tells the watch cache to start with a plain list: its
// watch-list start keys objects by namespace/name and would merge
// same-named replicas of different shards or clusters.
type noWatchList struct {
	storage.Interface
}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }
