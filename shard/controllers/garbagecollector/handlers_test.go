package garbagecollector

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestMonitorHandler(t *testing.T) {
	inCluster := func(m *metav1.PartialObjectMetadata) {
		m.Annotations = map[string]string{logicalcluster.AnnotationKey: "a"}
	}
	plain := obj("x", "x1", inCluster)
	owned := obj("x", "x1", inCluster, ownedBy("o1", false))
	ownedBlocking := obj("x", "x1", inCluster, ownedBy("o1", true))
	ownedOther := obj("x", "x1", inCluster, ownedBy("o2", false))
	orphaning := obj("x", "x1", inCluster, deleting(metav1.FinalizerOrphanDependents))
	statusChange := owned.DeepCopy()
	statusChange.ResourceVersion = "8"

	key := func(uid string) reconciler.Key { return reconciler.Key{Cluster: "a", Name: uid} }
	for _, tc := range []struct {
		name string
		fire func(cache.ResourceEventHandler)
		want []reconciler.Key
	}{
		{name: "add without owners", fire: func(h cache.ResourceEventHandler) { h.OnAdd(plain, false) }},
		{name: "add with an owner", fire: func(h cache.ResourceEventHandler) { h.OnAdd(owned, false) }, want: []reconciler.Key{key("o1")}},
		{name: "add while orphaning", fire: func(h cache.ResourceEventHandler) { h.OnAdd(orphaning, false) }, want: []reconciler.Key{key("x1")}},
		{name: "unrelated update", fire: func(h cache.ResourceEventHandler) { h.OnUpdate(owned, statusChange) }},
		{name: "owner changed", fire: func(h cache.ResourceEventHandler) { h.OnUpdate(owned, ownedOther) }, want: []reconciler.Key{key("o1"), key("o2")}},
		{name: "blocking changed", fire: func(h cache.ResourceEventHandler) { h.OnUpdate(ownedBlocking, owned) }, want: []reconciler.Key{key("o1"), key("o1")}},
		{name: "orphan finalizer set", fire: func(h cache.ResourceEventHandler) { h.OnUpdate(plain, orphaning) }, want: []reconciler.Key{key("x1")}},
		{name: "delete", fire: func(h cache.ResourceEventHandler) { h.OnDelete(owned) }, want: []reconciler.Key{key("x1"), key("o1")}},
		{
			name: "delete tombstone",
			fire: func(h cache.ResourceEventHandler) {
				h.OnDelete(cache.DeletedFinalStateUnknown{Key: "a|ns/x", Obj: plain})
			},
			want: []reconciler.Key{key("x1")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []reconciler.Key
			tc.fire(monitorHandler(func(k reconciler.Key) { got = append(got, k) }))
			if !slices.Equal(got, tc.want) {
				t.Errorf("enqueued %v, want %v", got, tc.want)
			}
		})
	}
}
