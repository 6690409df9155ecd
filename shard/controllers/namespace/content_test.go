package namespace

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// objects is the content of one namespace, by name, for content tests.
type objects map[string]metav1.PartialObjectMetadata

func object(name string, finalizers ...string) metav1.PartialObjectMetadata {
	return metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Finalizers: finalizers}}
}

// calls records what a contentClient was asked to do.
type calls struct {
	collections, lists int
	deleted            []string
}

// fakeContent returns a contentClient over objs for cluster "a" and
// namespace "ns". Deleting an object with finalizers marks it; without,
// removes it. The errors, when set, are returned instead.
func fakeContent(t *testing.T, objs objects, c *calls, collectionErr, listErr, deleteErr error) contentClient {
	check := func(cluster logicalcluster.Name, namespace string) {
		t.Helper()
		if cluster != "a" || namespace != "ns" {
			t.Errorf("content call for %s/%s, want a/ns", cluster, namespace)
		}
	}
	remove := func(name string) {
		o := objs[name]
		if len(o.Finalizers) > 0 {
			now := metav1.Now()
			o.DeletionTimestamp = &now
			objs[name] = o
			return
		}
		delete(objs, name)
	}
	return contentClient{
		deleteCollection: func(_ context.Context, cluster logicalcluster.Name, _ schema.GroupVersionResource, namespace string) error {
			check(cluster, namespace)
			c.collections++
			if collectionErr != nil {
				return collectionErr
			}
			for name := range objs {
				remove(name)
			}
			return nil
		},
		list: func(_ context.Context, cluster logicalcluster.Name, _ schema.GroupVersionResource, namespace string) ([]metav1.PartialObjectMetadata, error) {
			check(cluster, namespace)
			c.lists++
			if listErr != nil {
				return nil, listErr
			}
			var out []metav1.PartialObjectMetadata
			for _, o := range objs {
				out = append(out, o)
			}
			return out, nil
		},
		deleteObject: func(_ context.Context, cluster logicalcluster.Name, _ schema.GroupVersionResource, namespace, name string, uid types.UID) error {
			check(cluster, namespace)
			if uid != types.UID("uid-"+name) {
				t.Errorf("delete of %s with UID precondition %q", name, uid)
			}
			c.deleted = append(c.deleted, name)
			if deleteErr != nil {
				return deleteErr
			}
			remove(name)
			return nil
		},
	}
}

func TestDeleteContent(t *testing.T) {
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for _, tc := range []struct {
		name                              string
		collection                        bool
		objs                              objects
		collectionErr, listErr, deleteErr error
		want                              leftovers
		wantErr                           bool
		wantCollections, wantDeleted      int
	}{
		{
			name: "deletecollection empties the namespace", collection: true,
			objs:            objects{"a": object("a"), "b": object("b")},
			wantCollections: 1,
		},
		{
			name: "objects with finalizers linger", collection: true,
			objs:            objects{"a": object("a", "example.com/keep"), "b": object("b", "example.com/keep", "other"), "c": object("c")},
			want:            leftovers{count: 2, finalizers: map[string]int{"example.com/keep": 2, "other": 1}},
			wantCollections: 1,
		},
		{
			name: "one by one without deletecollection",
			objs: objects{"a": object("a"), "b": object("b")}, wantDeleted: 2,
		},
		{
			name: "one by one when deletecollection is not supported", collection: true,
			objs:            objects{"a": object("a")},
			collectionErr:   apierrors.NewMethodNotSupported(configmaps.GroupResource(), "deletecollection"),
			wantCollections: 1, wantDeleted: 1,
		},
		{
			name: "resource no longer served", collection: true,
			objs:            objects{"a": object("a")},
			collectionErr:   apierrors.NewNotFound(configmaps.GroupResource(), ""),
			want:            leftovers{},
			wantCollections: 1,
		},
		{
			name: "deletecollection fails", collection: true,
			objs:          objects{"a": object("a")},
			collectionErr: apierrors.NewForbidden(configmaps.GroupResource(), "", errors.New("no")),
			wantErr:       true, wantCollections: 1,
		},
		{
			name: "list fails",
			objs: objects{"a": object("a")}, listErr: errors.New("boom"), wantErr: true,
		},
		{
			name: "object already gone",
			objs: objects{"a": object("a")}, deleteErr: apierrors.NewNotFound(configmaps.GroupResource(), "a"),
			want: leftovers{count: 1}, wantDeleted: 1,
		},
		{
			name: "delete fails",
			objs: objects{"a": object("a")}, deleteErr: errors.New("boom"), wantErr: true, wantDeleted: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &calls{}
			client := fakeContent(t, tc.objs, c, tc.collectionErr, tc.listErr, tc.deleteErr)
			got, err := client.deleteContent(t.Context(), "a", "ns", resource{GroupVersionResource: configmaps, deleteCollection: tc.collection})
			if (err != nil) != tc.wantErr {
				t.Fatalf("deleteContent() error = %v, want error %v", err, tc.wantErr)
			}
			if got.count != tc.want.count || len(got.finalizers) != len(tc.want.finalizers) {
				t.Errorf("deleteContent() = %+v, want %+v", got, tc.want)
			}
			for f, n := range tc.want.finalizers {
				if got.finalizers[f] != n {
					t.Errorf("finalizer %s on %d objects, want %d", f, got.finalizers[f], n)
				}
			}
			if c.collections != tc.wantCollections || len(c.deleted) != tc.wantDeleted {
				t.Errorf("deletecollection calls = %d, deletes = %v; want %d and %d", c.collections, c.deleted, tc.wantCollections, tc.wantDeleted)
			}
		})
	}
}
