package events

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// TTL is how long events are kept: etcd drops them an hour after their
// last write, as kube-apiserver does by default (--event-ttl).
const TTL = time.Hour

// NewREST returns a storage of events, persisted through optsGetter under
// the core group's "events" resource. Installed in the events.k8s.io group,
// it serves the same objects converted to events.k8s.io/v1: both keep core
// v1 events.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, error) {
	ttl := uint64(TTL.Seconds())
	return store.NewREST(optsGetter, store.Options{
		Resource:       corev1.Resource("events"),
		Singular:       "event",
		NewFunc:        func() runtime.Object { return &corev1.Event{} },
		NewListFunc:    func() runtime.Object { return &corev1.EventList{} },
		Strategy:       NewStrategy(scheme),
		TableConvertor: TableConvertor(),
		AttrFunc:       GetAttrs,
		ShortNames:     []string{"ev"},
		Customize: func(s *genericregistry.Store) {
			s.TTLFunc = func(runtime.Object, uint64, bool) (uint64, error) { return ttl, nil }
		},
	})
}
