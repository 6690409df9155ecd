package informers

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func clusterConfigMap(cluster, name, shard string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{
		logicalcluster.AnnotationKey: cluster, "kcp.io/shard": shard}}, Data: map[string]string{"value": shard}}
}

// TestUnion: lookups read local, then remote without the replicas of
// local's own objects (skip); handlers see both sides' events but the
// skipped ones; the union has synced when local has.
func TestUnion(t *testing.T) {
	local := newFakeWildcard(clusterConfigMap("a", "one", "here"))
	remote := newFakeWildcard(clusterConfigMap("a", "one", "here"), clusterConfigMap("b", "two", "there"))
	localInformer := NewSharedIndexInformer(local.listWatch(), &corev1.ConfigMap{}, 0, ClusterIndexers())
	remoteInformer := NewSharedIndexInformer(remote.listWatch(), &corev1.ConfigMap{}, 0, ClusterIndexers())
	skip := func(obj any) bool { return obj.(*corev1.ConfigMap).Annotations["kcp.io/shard"] == "here" }
	u := NewUnion(NewInformer[*corev1.ConfigMap](localInformer, corev1.Resource("configmaps")),
		NewInformer[*corev1.ConfigMap](remoteInformer, corev1.Resource("configmaps")), corev1.Resource("configmaps"), skip)

	var mu sync.Mutex
	var added []string
	if _, err := u.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		mu.Lock()
		defer mu.Unlock()
		cm := obj.(*corev1.ConfigMap)
		added = append(added, logicalcluster.From(cm).String()+"/"+cm.Name+"@"+cm.Data["value"])
	}}); err != nil {
		t.Fatal(err)
	}
	runInformer(t, localInformer)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), u.Informer().HasSynced) {
		t.Fatal("the union did not sync with its local side")
	}
	// Remote not running yet: only local is seen.
	if _, err := u.Lister().Cluster("b").Get("two"); !apierrors.IsNotFound(err) {
		t.Errorf("before the remote side runs: %v, want NotFound", err)
	}
	runInformer(t, remoteInformer)
	if !cache.WaitForCacheSync(ctx.Done(), remoteInformer.HasSynced) {
		t.Fatal("remote did not sync")
	}
	one, err := u.Lister().Cluster("a").Get("one")
	if err != nil || one.Data["value"] != "here" {
		t.Errorf("a/one = %v, %v; want the local object", one, err)
	}
	two, err := u.Lister().Cluster("b").Get("two")
	if err != nil || two.Data["value"] != "there" {
		t.Errorf("b/two = %v, %v; want the remote object", two, err)
	}
	all, err := u.Lister().List(labels.Everything())
	if err != nil || len(all) != 2 {
		t.Errorf("List = %d objects, %v; want 2 (the replica of a/one hidden)", len(all), err)
	}
	if err := u.Informer().AddIndexers(cache.Indexers{"value": func(obj any) ([]string, error) {
		return []string{obj.(*corev1.ConfigMap).Data["value"]}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if objs, err := u.Informer().GetIndexer().ByIndex("value", "here"); err != nil || len(objs) != 1 {
		t.Errorf("ByIndex(value, here) = %d, %v; want the local object only", len(objs), err)
	}
	if objs, err := u.Informer().GetIndexer().ByIndex("value", "there"); err != nil || len(objs) != 1 {
		t.Errorf("ByIndex(value, there) = %d, %v; want the remote object", len(objs), err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := slices.Clone(added)
		mu.Unlock()
		slices.Sort(got)
		if slices.Equal(got, []string{"a/one@here", "b/two@there"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("handler saw %v, want a/one@here (local) and b/two@there (remote)", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := u.Informer().GetIndexer().Add(clusterConfigMap("c", "x", "here")); err == nil {
		t.Error("writing into the union's store succeeded")
	}
}
