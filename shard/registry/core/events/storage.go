package events

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
)

// TTL is how long events are kept: etcd drops them an hour after their
// last write, as kube-apiserver does by default (--event-ttl).
const TTL = time.Hour

// REST is the storage of events. The same storage serves core v1 events
// and events.k8s.io/v1 events: both keep core v1 events under the resource
// "events" of the core group.
type REST struct {
	*genericregistry.Store
}

var (
	_ rest.StandardStorage      = &REST{}
	_ rest.ShortNamesProvider   = &REST{}
	_ rest.SingularNameProvider = &REST{}
)

// NewREST returns a storage of events, persisted through optsGetter under
// the core group's "events" resource. Installed in the events.k8s.io group,
// it serves the same objects converted to events.k8s.io/v1.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*REST, error) {
	strategy := NewStrategy(scheme)
	ttl := uint64(TTL.Seconds())
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Event{} },
		NewListFunc:               func() runtime.Object { return &corev1.EventList{} },
		DefaultQualifiedResource:  corev1.Resource("events"),
		SingularQualifiedResource: corev1.Resource("event"),
		TTLFunc: func(runtime.Object, uint64, bool) (uint64, error) {
			return ttl, nil
		},
		CreateStrategy: strategy,
		UpdateStrategy: strategy,
		DeleteStrategy: strategy,
		TableConvertor: TableConvertor(),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, fmt.Errorf("completing events storage: %w", err)
	}
	return &REST{Store: store}, nil
}

// ShortNames returns the short name of events: ev.
func (*REST) ShortNames() []string {
	return []string{"ev"}
}
