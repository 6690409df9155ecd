package garbagecollector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const (
	// uidIndex indexes monitored objects by cluster|uid.
	uidIndex = "garbagecollector-uid"
	// ownerIndex indexes monitored objects by cluster|uid of each of their
	// owners.
	ownerIndex = "garbagecollector-owner"
)

// object is a monitored object as the garbage collector caches it.
type object struct {
	// resource is the resource the object was found in.
	resource schema.GroupVersionResource
	// meta is the cached metadata; shared with the cache, do not change.
	meta *metav1.PartialObjectMetadata
}

// monitor is the wildcard metadata informer of one resource.
type monitor struct {
	resource schema.GroupVersionResource
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
}

// monitorSet holds one monitor per watched group resource, across all
// logical clusters, and answers graph questions from their indexes.
type monitorSet struct {
	// newListWatch returns the wildcard list and watch of a resource.
	newListWatch func(schema.GroupVersionResource) cache.ListerWatcher
	// handler receives the events of every monitor.
	handler cache.ResourceEventHandler

	mu       sync.RWMutex
	ctx      context.Context
	monitors map[schema.GroupResource]*monitor
	wg       sync.WaitGroup
}

func newMonitorSet(newListWatch func(schema.GroupVersionResource) cache.ListerWatcher, handler cache.ResourceEventHandler) *monitorSet {
	return &monitorSet{newListWatch: newListWatch, handler: handler, monitors: map[schema.GroupResource]*monitor{}}
}

// start makes ensure run monitors until ctx is done.
func (s *monitorSet) start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ctx = ctx
}

// wait waits for every monitor to stop; their context must be done.
func (s *monitorSet) wait() { s.wg.Wait() }

// ensure runs a monitor of gvr, replacing one of another version of the
// same resource, and returns its informer.
func (s *monitorSet) ensure(gvr schema.GroupVersionResource) (cache.SharedIndexInformer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil {
		return nil, errors.New("monitors have not been started")
	}
	if m, ok := s.monitors[gvr.GroupResource()]; ok {
		if m.resource == gvr {
			return m.informer, nil
		}
		m.cancel()
		delete(s.monitors, gvr.GroupResource())
	}

	informer := informers.NewSharedIndexInformerWithOptions(s.newListWatch(gvr), &metav1.PartialObjectMetadata{}, cache.SharedIndexInformerOptions{
		Indexers:          cache.Indexers{uidIndex: uidIndexFunc, ownerIndex: ownerIndexFunc},
		ObjectDescription: "metadata of " + gvr.String(),
	})
	if err := informer.SetTransform(trim); err != nil {
		return nil, fmt.Errorf("monitoring %s: %w", gvr, err)
	}
	if _, err := informer.AddEventHandler(s.handler); err != nil {
		return nil, fmt.Errorf("monitoring %s: %w", gvr, err)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.monitors[gvr.GroupResource()] = &monitor{resource: gvr, informer: informer, cancel: cancel}
	s.wg.Go(func() { informer.RunWithContext(ctx) })
	klog.FromContext(ctx).V(2).Info("Monitoring resource", "resource", gvr.String())
	return informer, nil
}

// remove stops the monitor of gr, if any.
func (s *monitorSet) remove(gr schema.GroupResource) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.monitors[gr]; ok {
		m.cancel()
		delete(s.monitors, gr)
		klog.FromContext(s.ctx).V(2).Info("Stopped monitoring resource", "resource", m.resource.String())
	}
}

// version returns the version gr is monitored in.
func (s *monitorSet) version(gr schema.GroupResource) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.monitors[gr]
	if !ok {
		return "", false
	}
	return m.resource.Version, true
}

// snapshot returns the current monitors in a stable order.
func (s *monitorSet) snapshot() []*monitor {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := slices.Collect(maps.Values(s.monitors))
	slices.SortFunc(out, func(a, b *monitor) int {
		return strings.Compare(a.resource.GroupResource().String(), b.resource.GroupResource().String())
	})
	return out
}

// objectByUID returns the monitored object with uid in cluster.
func (s *monitorSet) objectByUID(cluster logicalcluster.Name, uid types.UID) (object, bool) {
	key := indexKey(cluster, uid)
	for _, m := range s.snapshot() {
		objs, err := m.informer.GetIndexer().ByIndex(uidIndex, key)
		if err != nil || len(objs) == 0 {
			continue
		}
		if pom, ok := objs[0].(*metav1.PartialObjectMetadata); ok {
			return object{resource: m.resource, meta: pom}, true
		}
	}
	return object{}, false
}

// dependentsOf returns the monitored objects of cluster with an owner
// reference to uid.
func (s *monitorSet) dependentsOf(cluster logicalcluster.Name, uid types.UID) []object {
	key := indexKey(cluster, uid)
	var out []object
	for _, m := range s.snapshot() {
		objs, err := m.informer.GetIndexer().ByIndex(ownerIndex, key)
		if err != nil {
			continue
		}
		for _, obj := range objs {
			if pom, ok := obj.(*metav1.PartialObjectMetadata); ok {
				out = append(out, object{resource: m.resource, meta: pom})
			}
		}
	}
	return out
}

// indexKey is the index value of uid in cluster. UIDs are unique, but
// owners and dependents must also be in one logical cluster.
func indexKey(cluster logicalcluster.Name, uid types.UID) string {
	return string(cluster) + informers.ClusterSeparator + string(uid)
}

func uidIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("object has no meta: %w", err)
	}
	return []string{indexKey(logicalcluster.From(m), m.GetUID())}, nil
}

func ownerIndexFunc(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("object has no meta: %w", err)
	}
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return nil, nil
	}
	cluster := logicalcluster.From(m)
	out := make([]string, 0, len(refs))
	for _, ref := range refs {
		out = append(out, indexKey(cluster, ref.UID))
	}
	return out, nil
}

// trim keeps of an object only what the garbage collector reads, so that
// its caches hold a few hundred bytes per object: no labels, no managed
// fields, no annotations but the logical cluster.
func trim(obj any) (any, error) {
	pom, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	out := &metav1.PartialObjectMetadata{
		// Kinds, versions and namespaces repeat across objects: one copy
		// of each string is kept.
		TypeMeta: metav1.TypeMeta{APIVersion: unique.Make(pom.APIVersion).Value(), Kind: unique.Make(pom.Kind).Value()},
		ObjectMeta: metav1.ObjectMeta{
			Name:              pom.Name,
			Namespace:         unique.Make(pom.Namespace).Value(),
			UID:               pom.UID,
			ResourceVersion:   pom.ResourceVersion,
			DeletionTimestamp: pom.DeletionTimestamp,
			Finalizers:        pom.Finalizers,
			OwnerReferences:   pom.OwnerReferences,
		},
	}
	if cluster, ok := pom.Annotations[logicalcluster.AnnotationKey]; ok {
		out.Annotations = clusterAnnotations.of(cluster)
	}
	return out, nil
}

// clusterAnnotations are the annotations of trimmed objects: one map per
// logical cluster, shared by its objects (a Go map costs about 300 bytes
// even with one entry, more than the rest of a trimmed object).
var clusterAnnotations = &annotationTable{maps: map[string]map[string]string{}}

// maxAnnotationMaps bounds the table: when it is full it starts afresh, so
// that the maps of deleted clusters do not stay. Objects keep the map they
// have; later objects of their cluster get a new one.
const maxAnnotationMaps = 1 << 16

type annotationTable struct {
	lock sync.Mutex
	maps map[string]map[string]string
}

// of returns the map holding only the cluster annotation with value
// cluster. Callers must not change it.
func (t *annotationTable) of(cluster string) map[string]string {
	t.lock.Lock()
	defer t.lock.Unlock()
	if m, ok := t.maps[cluster]; ok {
		return m
	}
	if len(t.maps) >= maxAnnotationMaps {
		t.maps = map[string]map[string]string{}
	}
	m := map[string]string{logicalcluster.AnnotationKey: cluster}
	t.maps[cluster] = m
	return m
}
