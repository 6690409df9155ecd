package objects

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

// Related objects are watched on both sides, one informer per related
// kind on the service cluster and one per kind and virtual workspace
// endpoint (the export's claim, across its consumers), keeping metadata
// only. An event of a Secret or ConfigMap is mapped to the main objects
// whose references name it through an index of each main-object informer
// (by the names the references evaluate to on that side), so a related
// object that appears, changes or is deleted on either side has its main
// object reconciled. The same caches spare the requests of a reconcile
// whose related copies are current: a copy records the resourceVersion of
// the original it was made from (AnnotationRelatedSource), and only a
// copy whose original has another one is read and written again.

const indexRelated = "related"

// relatedIndexKey identifies a related object on one side: its kind, the
// logical cluster (empty on the service cluster), namespace and name.
func relatedIndexKey(kind, cluster, namespace, name string) string {
	return kind + "|" + cluster + "|" + namespace + "|" + name
}

// relatedIndex returns the index function of main objects by the related
// objects their references name on their side; cluster tells whether the
// objects are in logical clusters (the platform side).
func (e *Engine) relatedIndex(cluster bool) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, nil
		}
		c := ""
		if cluster {
			c = logicalcluster.From(u).String()
		}
		var keys []string
		for _, rel := range e.target.PublishedResource.Spec.Related {
			ns, name, err := published.RelatedName(u, rel.Reference)
			if err != nil || name == "" {
				continue
			}
			keys = append(keys, relatedIndexKey(rel.Kind, c, ns, name))
		}
		return keys, nil
	}
}

// relatedKinds returns the kinds of the target's related resources.
func (e *Engine) relatedKinds() []string {
	var kinds []string
	seen := map[string]bool{}
	for _, rel := range e.target.PublishedResource.Spec.Related {
		if _, ok := published.RelatedResources[rel.Kind]; ok && !seen[rel.Kind] {
			seen[rel.Kind] = true
			kinds = append(kinds, rel.Kind)
		}
	}
	return kinds
}

// watchRelated adds the related informers and their handlers; the main
// informers must not have started.
func (e *Engine) watchRelated(service dynamic.Interface) error {
	kinds := e.relatedKinds()
	if len(kinds) == 0 {
		return nil
	}
	e.relatedLocal = map[string]cache.SharedIndexInformer{}
	if err := e.local.AddIndexers(cache.Indexers{indexRelated: e.relatedIndex(false)}); err != nil {
		return err
	}
	for i := range e.remote {
		if err := e.remote[i].informer.AddIndexers(cache.Indexers{indexRelated: e.relatedIndex(true)}); err != nil {
			return err
		}
		e.remote[i].related = map[string]cache.SharedIndexInformer{}
	}
	for _, kind := range kinds {
		gvr := published.RelatedResources[kind]
		local := dynamicinformer.NewFilteredDynamicInformer(service, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
		if err := local.SetTransform(metadataOnly); err != nil {
			return err
		}
		mapLocal := func(u *unstructured.Unstructured) []reconciler.Key {
			return e.mainKeys(e.local, relatedIndexKey(kind, "", u.GetNamespace(), u.GetName()), remoteKeyOf)
		}
		if err := e.ctrl.Watch(local, reconciler.EnqueueMappedHandler(e.ctrl, mapLocal)); err != nil {
			return err
		}
		e.relatedLocal[kind] = local
		e.related = append(e.related, local)
		for i := range e.remote {
			src := &e.remote[i]
			lw := informers.NoWatchList(&listWatch{client: src.clients.Wildcard().Resource(gvr)})
			remote := informers.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
			if err := remote.SetTransform(metadataOnly); err != nil {
				return err
			}
			mapRemote := func(u *unstructured.Unstructured) []reconciler.Key {
				key := relatedIndexKey(kind, logicalcluster.From(u).String(), u.GetNamespace(), u.GetName())
				return e.mainKeys(src.informer, key, keyOfRemote)
			}
			// Not waited for: a consumer's claim may be unanswered, and
			// one endpoint must not hold the others up.
			if err := e.ctrl.WatchUnsynced(remote, reconciler.EnqueueMappedHandler(e.ctrl, mapRemote)); err != nil {
				return err
			}
			src.related[kind] = remote
			e.related = append(e.related, remote)
		}
	}
	return nil
}

// mainKeys returns the keys of the main objects of informer whose
// references name the related object of index key.
func (e *Engine) mainKeys(informer cache.SharedIndexInformer, key string, keyOf func(*unstructured.Unstructured) []reconciler.Key) []reconciler.Key {
	objs, err := informer.GetIndexer().ByIndex(indexRelated, key)
	if err != nil {
		return nil
	}
	var keys []reconciler.Key
	for _, o := range objs {
		keys = append(keys, keyOf(o.(*unstructured.Unstructured))...)
	}
	return keys
}

// keyOfRemote is the key of a remote object.
func keyOfRemote(u *unstructured.Unstructured) []reconciler.Key {
	return []reconciler.Key{{Cluster: logicalcluster.From(u), Namespace: u.GetNamespace(), Name: u.GetName()}}
}

// metadataOnly keeps apiVersion, kind and metadata (less managedFields) of
// related objects: their content is read when copied.
func metadataOnly(obj any) (any, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		stripped, err := metadataOnly(d.Obj)
		return cache.DeletedFinalStateUnknown{Key: d.Key, Obj: stripped}, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": u.Object["metadata"],
	}}
	out.SetManagedFields(nil)
	return out, nil
}

// cachedMeta returns the object of key in informer's store, and whether
// the store can tell: false while the informer has not synced (or there is
// none), when only a request can.
func cachedMeta(informer cache.SharedIndexInformer, key string) (obj *unstructured.Unstructured, known bool) {
	if informer == nil || !informer.HasSynced() {
		return nil, false
	}
	o, ok, err := informer.GetStore().GetByKey(key)
	if err != nil {
		return nil, false
	}
	if !ok {
		return nil, true
	}
	u, _ := o.(*unstructured.Unstructured)
	return u, u != nil
}

// localStoreKey is the store key of a service cluster object.
func localStoreKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
