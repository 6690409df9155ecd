package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestWatchersIndexedByCluster: the watch cache offers an event to the
// watchers of its own cluster and to wildcard watchers only; every kind of
// watch still sees exactly what it asks for.
func TestWatchersIndexedByCluster(t *testing.T) {
	s := framework.StartShard(t)
	a, b, ab := logicalcluster.Name("watch-a"), logicalcluster.Name("watch-b"), logicalcluster.Name("watch-a-b")
	for _, c := range []logicalcluster.Name{a, b, ab} {
		createCluster(t, s, c)
	}
	ctx := t.Context()
	type watcher struct {
		name string
		w    watch.Interface
		want []string // names of ADDED ConfigMaps, in order
	}
	open := func(name string, client kubernetes.Interface, ns string, opts metav1.ListOptions, want ...string) *watcher {
		w, err := client.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
		if err != nil {
			t.Fatalf("watch %s: %v", name, err)
		}
		t.Cleanup(w.Stop)
		return &watcher{name: name, w: w, want: want}
	}
	ka, kb, kab := kube(t, s, a), kube(t, s, b), kube(t, s, ab)
	wild := kube(t, s, logicalcluster.Wildcard)
	if _, err := ka.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	watchers := []*watcher{
		open("a, all namespaces", ka, "", metav1.ListOptions{}, "a1", "a2", "a3"),
		open("a, default", ka, "default", metav1.ListOptions{}, "a1", "a2"),
		open("a, by name", ka, "default", metav1.ListOptions{FieldSelector: "metadata.name=a2"}, "a2"),
		open("a, by label", ka, "", metav1.ListOptions{LabelSelector: "pick=yes"}, "a3"),
		open("b", kb, "", metav1.ListOptions{}, "b1"),
		open("a-b", kab, "default", metav1.ListOptions{}, "ab1"),
		open("wildcard", wild, "", metav1.ListOptions{}, "a1", "a2", "a3", "b1", "ab1"),
	}
	for _, w := range []struct {
		client   kubernetes.Interface
		ns, name string
		labels   map[string]string
	}{
		{ka, "default", "a1", nil}, {ka, "default", "a2", nil}, {ka, "other", "a3", map[string]string{"pick": "yes"}},
		{kb, "default", "b1", nil}, {kab, "default", "ab1", nil},
	} {
		if _, err := w.client.CoreV1().ConfigMaps(w.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.name, Labels: w.labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range watchers {
		var got []string
		deadline := time.After(10 * time.Second)
	collect:
		for len(got) < len(w.want) {
			select {
			case ev := <-w.w.ResultChan():
				if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Added {
					got = append(got, cm.Name)
				}
			case <-deadline:
				break collect
			}
		}
		// Nothing more may arrive.
		extra := time.After(300 * time.Millisecond)
	drain:
		for {
			select {
			case ev := <-w.w.ResultChan():
				if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
					got = append(got, cm.Name)
				}
			case <-extra:
				break drain
			}
		}
		if len(got) != len(w.want) {
			t.Errorf("watch %s saw %v, want %v", w.name, got, w.want)
			continue
		}
		for i := range got {
			if got[i] != w.want[i] {
				t.Errorf("watch %s saw %v, want %v", w.name, got, w.want)
				break
			}
		}
	}
}
