package garbagecollector

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// staticListWatch serves objs once and then an idle watch.
func staticListWatch(objs ...metav1.PartialObjectMetadata) cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: objs}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
}

func inCluster(cluster logicalcluster.Name, m *metav1.PartialObjectMetadata) metav1.PartialObjectMetadata {
	out := *m.DeepCopy()
	out.Annotations = map[string]string{logicalcluster.AnnotationKey: string(cluster), "big": "dropped"}
	out.Labels = map[string]string{"dropped": "too"}
	out.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "dropped"}}
	return out
}

func TestMonitorSet(t *testing.T) {
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	// The same names and UIDs in two logical clusters: UIDs are unique in
	// practice, but the indexes must not rely on it across clusters.
	served := map[schema.GroupVersionResource][]metav1.PartialObjectMetadata{
		configmaps: {
			inCluster("a", obj("owner", "o1")),
			inCluster("a", obj("dep", "d1", ownedBy("o1", false))),
			inCluster("b", obj("dep", "d1", ownedBy("o1", false))),
		},
		secrets: {
			inCluster("a", obj("secret", "s1", ownedBy("o1", false))),
		},
	}
	s := newMonitorSet(func(gvr schema.GroupVersionResource) cache.ListerWatcher {
		return staticListWatch(served[gvr]...)
	}, cache.ResourceEventHandlerFuncs{})

	if _, err := s.ensure(configmaps); err == nil {
		t.Fatal("ensure() before start succeeded")
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer func() {
		cancel()
		s.wait()
	}()
	s.start(ctx)
	var synced []cache.InformerSynced
	for _, gvr := range []schema.GroupVersionResource{configmaps, secrets} {
		informer, err := s.ensure(gvr)
		if err != nil {
			t.Fatal(err)
		}
		synced = append(synced, informer.HasSynced)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 10*time.Second)
	defer waitCancel()
	if !cache.WaitForCacheSync(waitCtx.Done(), synced...) {
		t.Fatal("monitors did not sync")
	}

	owner, ok := s.objectByUID("a", "o1")
	if !ok || owner.resource != configmaps || owner.meta.Name != "owner" {
		t.Fatalf("objectByUID(a, o1) = %+v, %v", owner, ok)
	}
	if len(owner.meta.Labels) > 0 || len(owner.meta.ManagedFields) > 0 || len(owner.meta.Annotations) != 1 {
		t.Errorf("cached metadata was not trimmed: %+v", owner.meta.ObjectMeta)
	}
	if _, ok := s.objectByUID("b", "o1"); ok {
		t.Error("objectByUID found an owner of cluster a in cluster b")
	}

	names := func(objs []object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.resource.Resource+"/"+logicalcluster.From(o.meta).String()+"/"+o.meta.Name)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(s.dependentsOf("a", "o1")), []string{"configmaps/a/dep", "secrets/a/secret"}; !slices.Equal(got, want) {
		t.Errorf("dependentsOf(a, o1) = %v, want %v", got, want)
	}
	if got, want := names(s.dependentsOf("b", "o1")), []string{"configmaps/b/dep"}; !slices.Equal(got, want) {
		t.Errorf("dependentsOf(b, o1) = %v, want %v", got, want)
	}
	if got := s.dependentsOf("a", types.UID("none")); len(got) != 0 {
		t.Errorf("dependentsOf(a, none) = %v", got)
	}

	// Another version of a monitored resource replaces its monitor.
	if _, err := s.ensure(secrets.GroupResource().WithVersion("v2")); err != nil {
		t.Fatal(err)
	}
	if v, ok := s.version(secrets.GroupResource()); !ok || v != "v2" {
		t.Errorf("version(secrets) = %q, %v; want v2", v, ok)
	}
	s.remove(secrets.GroupResource())
	if _, ok := s.version(secrets.GroupResource()); ok {
		t.Error("removed monitor is still there")
	}
	if got, want := names(s.dependentsOf("a", "o1")), []string{"configmaps/a/dep"}; !slices.Equal(got, want) {
		t.Errorf("dependentsOf(a, o1) after removal = %v, want %v", got, want)
	}
}

// TestTrimSharesClusterAnnotations pins that trimmed objects of one logical
// cluster share one annotations map, and that objects of another cluster
// get theirs.
func TestTrimSharesClusterAnnotations(t *testing.T) {
	object := func(cluster, name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
			logicalcluster.AnnotationKey: cluster, "other": "x"}}}
	}
	trimmed := func(o *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
		out, err := trim(o)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*metav1.PartialObjectMetadata)
	}
	a1, a2, b := trimmed(object("ta", "one")), trimmed(object("ta", "two")), trimmed(object("tb", "one"))
	if !maps.Equal(a1.Annotations, map[string]string{logicalcluster.AnnotationKey: "ta"}) || logicalcluster.From(b) != "tb" {
		t.Fatalf("trimmed annotations %v and %v", a1.Annotations, b.Annotations)
	}
	if reflect.ValueOf(a1.Annotations).UnsafePointer() != reflect.ValueOf(a2.Annotations).UnsafePointer() {
		t.Errorf("two objects of cluster ta have two annotation maps")
	}
	if reflect.ValueOf(a1.Annotations).UnsafePointer() == reflect.ValueOf(b.Annotations).UnsafePointer() {
		t.Errorf("objects of clusters ta and tb share an annotation map")
	}
}
