package storage

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// startRecorder is a CacheSource without a cache that records whether each
// read asked to start one.
type startRecorder struct{ starts []bool }

func (r *startRecorder) Acquire(_ context.Context, start bool) (*SharedCache, func(), bool) {
	r.starts = append(r.starts, start)
	return nil, nil, false
}

// emptyStore answers every list and watch with nothing.
type emptyStore struct{ storage.Interface }

func (emptyStore) GetList(context.Context, string, storage.ListOptions, runtime.Object) error {
	return nil
}

func (emptyStore) Watch(context.Context, string, storage.ListOptions) (watch.Interface, error) {
	return watch.NewEmptyWatch(), nil
}

// TestCacheUsers: reads of one cluster start the shared cache, reads
// across all clusters do not, unless they are marked as its users (the
// apiexport virtual workspace).
func TestCacheUsers(t *testing.T) {
	rec := &startRecorder{}
	s := &cachedReads{Interface: emptyStore{}, caches: rec,
		newFunc: func() runtime.Object { return &unstructured.Unstructured{} }, newListFunc: func() runtime.Object { return &unstructured.UnstructuredList{} }}
	opts := storage.ListOptions{Predicate: storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything()}, Recursive: true}
	one := logicalcluster.WithCluster(context.Background(), logicalcluster.Cluster{Name: "a"})
	all := logicalcluster.WithCluster(context.Background(), logicalcluster.Cluster{Wildcard: true})
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"one cluster", one, true},
		{"across all clusters", all, false},
		{"across all clusters for a cache user", WithCacheUser(all), true},
	} {
		rec.starts = nil
		if err := s.GetList(tc.ctx, "/k", opts, &unstructured.UnstructuredList{}); err != nil {
			t.Fatal(err)
		}
		w, err := s.Watch(tc.ctx, "/k", opts)
		if err != nil {
			t.Fatal(err)
		}
		w.Stop()
		if len(rec.starts) != 2 || rec.starts[0] != tc.want || rec.starts[1] != tc.want {
			t.Errorf("%s: the list and the watch asked to start the cache: %v, want %v", tc.name, rec.starts, tc.want)
		}
	}
}
