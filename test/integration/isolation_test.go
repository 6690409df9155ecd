package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestIsolationBetweenSiblingClusters pins what isolation rests on with
// clusters whose names share prefixes (a, a-b, ab): a paginated list's
// continue token replayed in another cluster returns nothing of the first;
// a watch resumed from a resourceVersion sees only its own cluster's
// events while another cluster writes; label selectors narrow lists in one
// cluster and across all of them.
func TestIsolationBetweenSiblingClusters(t *testing.T) {
	s := framework.StartShard(t)
	clusters := []logicalcluster.Name{"iso-a", "iso-a-b", "iso-ab"}
	ctx := t.Context()
	for _, c := range clusters {
		createCluster(t, s, c)
		for i := range 3 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Labels: map[string]string{"tier": fmt.Sprintf("t%d", i), "cluster": string(c)}}}
			if _, err := kube(t, s, c).CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	fromCluster := func(cm corev1.ConfigMap) logicalcluster.Name {
		return logicalcluster.Name(cm.Annotations[logicalcluster.AnnotationKey])
	}

	t.Run("continue tokens", func(t *testing.T) {
		for _, from := range clusters {
			first, err := kube(t, s, from).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if first.Continue == "" {
				t.Fatalf("a list of 1 of the 3+ configmaps of %s has no continue token", from)
			}
			for _, in := range clusters {
				if in == from {
					continue
				}
				rest, err := kube(t, s, in).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{Limit: 10, Continue: first.Continue})
				if err != nil {
					continue // refusing the token is fine
				}
				for _, cm := range rest.Items {
					if c := fromCluster(cm); c != in {
						t.Errorf("the continue token of %s replayed in %s returned %s of %s", from, in, cm.Name, c)
					}
				}
			}
		}
	})

	t.Run("resumed watch", func(t *testing.T) {
		list, err := kube(t, s, "iso-a").CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Writes in the siblings before and after the watch starts.
		for _, c := range []logicalcluster.Name{"iso-a-b", "iso-ab"} {
			if _, err := kube(t, s, c).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		w, err := kube(t, s, "iso-a").CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for _, c := range []logicalcluster.Name{"iso-a-b", "iso-ab", "iso-a"} {
			if _, err := kube(t, s, c).CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		timeout := time.After(30 * time.Second)
		for {
			select {
			case ev := <-w.ResultChan():
				cm, ok := ev.Object.(*corev1.ConfigMap)
				if !ok {
					t.Fatalf("watch event %v %T", ev.Type, ev.Object)
				}
				if c := fromCluster(*cm); c != "iso-a" {
					t.Fatalf("the watch of iso-a resumed at %s saw %s %s of %s", list.ResourceVersion, ev.Type, cm.Name, c)
				}
				if ev.Type == watch.Added && cm.Name == "after" {
					return
				}
			case <-timeout:
				t.Fatal("no event of iso-a's own write")
			}
		}
	})

	t.Run("label selectors", func(t *testing.T) {
		one, err := kube(t, s, "iso-a").CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "tier=t1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(one.Items) != 1 || fromCluster(one.Items[0]) != "iso-a" || one.Items[0].Name != "cm-1" {
			t.Errorf("tier=t1 in iso-a: %d items", len(one.Items))
		}
		all, err := kube(t, s, logicalcluster.Wildcard).CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "tier=t1"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cm := range all.Items {
			got = append(got, string(fromCluster(cm))+"/"+cm.Name)
		}
		slices.Sort(got)
		if want := []string{"iso-a-b/cm-1", "iso-a/cm-1", "iso-ab/cm-1"}; !slices.Equal(got, want) {
			t.Errorf("tier=t1 across all clusters: %v, want %v", got, want)
		}
		byCluster, err := kube(t, s, logicalcluster.Wildcard).CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "cluster=iso-ab", FieldSelector: "metadata.name=cm-2"})
		if err != nil {
			t.Fatal(err)
		}
		if len(byCluster.Items) != 1 || fromCluster(byCluster.Items[0]) != "iso-ab" {
			t.Errorf("cluster=iso-ab,name=cm-2 across all clusters: %d items", len(byCluster.Items))
		}
	})
}

// TestCreateInATerminatingNamespaceIsForbidden holds a namespace in
// Terminating with a finalizer and checks that a create inside it gets 403
// with the NamespaceTerminating cause, as kube-apiserver answers.
func TestCreateInATerminatingNamespaceIsForbidden(t *testing.T) {
	s := framework.StartShard(t)
	c := logicalcluster.Name("terminating-ns")
	createCluster(t, s, c)
	ctx := t.Context()
	client := kube(t, s, c)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Namespaces().Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, controllerTimeout, "namespace held to be Terminating", func(ctx context.Context) (bool, error) {
		ns, err := client.CoreV1().Namespaces().Get(ctx, "held", metav1.GetOptions{})
		return err == nil && ns.Status.Phase == corev1.NamespaceTerminating, err
	})
	_, err := client.CoreV1().ConfigMaps("held").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("create in a terminating namespace: err = %v, want 403", err)
	}
	status := err.(apierrors.APIStatus).Status()
	if status.Details == nil || !slices.ContainsFunc(status.Details.Causes, func(c metav1.StatusCause) bool { return c.Type == corev1.NamespaceTerminatingCause }) {
		t.Errorf("403 without the %s cause: %+v", corev1.NamespaceTerminatingCause, status.Details)
	}
	// Unblock the namespace so that the shard can stop cleanly.
	ns, err := client.CoreV1().Namespaces().Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Finalizers = nil
	if _, err := client.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
