package storage_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/etcd/etcdtest"
	"github.com/tessera-dev/tessera/shard/registry/core/configmaps"
	"github.com/tessera-dev/tessera/shard/storage"
)

// configMaps returns the configmaps registry over the shard's storage
// layers (cluster-scoped keys, no watch cache) on a new embedded etcd.
func configMaps(t *testing.T) *configMapsREST {
	t.Helper()
	backend := storagebackend.NewDefaultConfig("/registry", nil)
	backend.Transport.ServerList = []string{etcdtest.Start(t)}
	scheme := runtime.NewScheme()
	if err := configmaps.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	getter := &storage.RESTOptionsGetter{Backend: *backend, Scheme: scheme, Codecs: serializer.NewCodecFactory(scheme)}
	r, err := configmaps.NewREST(scheme, getter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Destroy)
	return &configMapsREST{r}
}

type configMapsREST struct{ rest.StandardStorage }

// in is the context of a request to cluster c (or, for the wildcard, all
// clusters) in namespace ns.
func in(ctx context.Context, c logicalcluster.Cluster, ns string) context.Context {
	ctx = genericapirequest.WithNamespace(ctx, ns)
	ctx = logicalcluster.WithCluster(ctx, c)
	return genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "admin"})
}

func names(t *testing.T, obj runtime.Object) []string {
	t.Helper()
	var out []string
	for _, cm := range obj.(*corev1.ConfigMapList).Items {
		out = append(out, cm.Annotations[logicalcluster.AnnotationKey]+"/"+cm.Name)
	}
	slices.Sort(out)
	return out
}

// TestScopedStorageKeepsSiblingClustersApart writes the same names into
// clusters whose names are prefixes of each other and checks every way a
// request of one cluster reads storage: get, list (all namespaces, one
// namespace, pages and a continue token taken in another cluster), watch
// (also resumed from a resourceVersion while another cluster writes); and
// that only lists and watches go across all clusters.
func TestScopedStorageKeepsSiblingClustersApart(t *testing.T) {
	r := configMaps(t)
	ctx := t.Context()
	clusters := []logicalcluster.Name{"a", "a-b", "ab", "a:b"}
	for _, c := range clusters {
		for i := range 3 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "ns"}, Data: map[string]string{"in": string(c)}}
			if _, err := r.Create(in(ctx, logicalcluster.Cluster{Name: c}, "ns"), cm, nil, &metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range clusters {
		cctx := in(ctx, logicalcluster.Cluster{Name: c}, "ns")
		got, err := r.Get(cctx, "cm-1", &metav1.GetOptions{})
		if err != nil || got.(*corev1.ConfigMap).Data["in"] != string(c) {
			t.Errorf("get cm-1 in %s: %v, %v", c, got, err)
		}
		for _, ns := range []string{"", "ns"} {
			list, err := r.List(in(ctx, logicalcluster.Cluster{Name: c}, ns), &metainternalversion.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{string(c) + "/cm-0", string(c) + "/cm-1", string(c) + "/cm-2"}
			if got := names(t, list); !slices.Equal(got, want) {
				t.Errorf("list in %s, namespace %q: %v, want %v", c, ns, got, want)
			}
		}
		// A continue token of this cluster, replayed in every other.
		page, err := r.List(cctx, &metainternalversion.ListOptions{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		token := page.(*corev1.ConfigMapList).Continue
		if token == "" {
			t.Fatalf("a page of 1 of 3 in %s has no continue token", c)
		}
		for _, other := range clusters {
			if other == c {
				continue
			}
			rest, err := r.List(in(ctx, logicalcluster.Cluster{Name: other}, "ns"), &metainternalversion.ListOptions{Limit: 10, Continue: token})
			if err != nil {
				continue
			}
			for _, n := range names(t, rest) {
				if n[:len(other)+1] != string(other)+"/" {
					t.Errorf("the continue token of %s replayed in %s returned %s", c, other, n)
				}
			}
		}
	}
	if _, err := r.Get(in(ctx, logicalcluster.Cluster{Name: "a"}, "ns"), "cm-9", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of a name no cluster has: %v", err)
	}

	all, err := r.List(in(ctx, logicalcluster.Cluster{Wildcard: true}, ""), &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, all); len(got) != 12 {
		t.Errorf("list across all clusters: %v, want 12", got)
	}
	if _, err := r.Get(in(ctx, logicalcluster.Cluster{Wildcard: true}, "ns"), "cm-1", &metav1.GetOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("get across all clusters: err = %v, want BadRequest", err)
	}
	if _, err := r.Create(in(ctx, logicalcluster.Cluster{Wildcard: true}, "ns"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}}, nil, &metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("create across all clusters: err = %v, want BadRequest", err)
	}
	if _, err := r.Get(genericapirequest.WithNamespace(ctx, "ns"), "cm-1", &metav1.GetOptions{}); !apierrors.IsInternalError(err) {
		t.Errorf("get without a cluster: err = %v, want an internal error", err)
	}

	// A watch of a, resumed from a resourceVersion, while the siblings
	// write: only a's events.
	list, err := r.List(in(ctx, logicalcluster.Cluster{Name: "a"}, ""), &metainternalversion.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []logicalcluster.Name{"a-b", "ab"} {
		if _, err := r.Create(in(ctx, logicalcluster.Cluster{Name: c}, "ns"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: "ns"}}, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := r.Watch(in(ctx, logicalcluster.Cluster{Name: "a"}, ""), &metainternalversion.ListOptions{ResourceVersion: list.(*corev1.ConfigMapList).ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, c := range []logicalcluster.Name{"a:b", "a-b", "a"} {
		if _, err := r.Create(in(ctx, logicalcluster.Cluster{Name: c}, "ns"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "ns"}}, nil, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-w.ResultChan():
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok {
				t.Fatalf("event %v %T", ev.Type, ev.Object)
			}
			if c := cm.Annotations[logicalcluster.AnnotationKey]; c != "a" {
				t.Fatalf("the watch of a saw %s %s of %s", ev.Type, cm.Name, c)
			}
			if cm.Name == "after" {
				return
			}
		case <-timeout:
			t.Fatal("no event of a's own write")
		}
	}
}

// TestCreateWithAResourceVersionIsRefused: a create that carries a
// resourceVersion is the client's mistake, 400 Bad Request, not the 500
// Internal Error upstream's storage leads to.
func TestCreateWithAResourceVersionIsRefused(t *testing.T) {
	r := configMaps(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "with-rv", ResourceVersion: "42"}}
	_, err := r.Create(in(t.Context(), logicalcluster.Cluster{Name: "a"}, "ns"), cm, nil, &metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "resourceVersion should not be set") {
		t.Errorf("creating an object with a resourceVersion: %v, want 400 Bad Request", err)
	}
}
