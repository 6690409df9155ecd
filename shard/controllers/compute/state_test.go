package compute

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
)

func TestApplyNamespaceState(t *testing.T) {
	const state, deletion = workloadv1alpha1.ClusterResourceStateLabelPrefix, workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{state + "k1": "Sync", "other": "x"}}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "web", Labels: map[string]string{"app": "a"}}}

	if !ApplyNamespaceState(cm, ns, t0) || cm.Labels[state+"k1"] != "Sync" || cm.Labels["app"] != "a" || cm.Labels["other"] != "" {
		t.Errorf("placed: %+v", cm.ObjectMeta)
	}
	if ApplyNamespaceState(cm, ns, t0) {
		t.Error("nothing to change, but changed")
	}
	// The namespace is removing k1: the object gets the same time.
	ns.Annotations = map[string]string{deletion + "k1": "2026-11-28T09:00:00Z"}
	if !ApplyNamespaceState(cm, ns, t0) || cm.Annotations[deletion+"k1"] != "2026-11-28T09:00:00Z" {
		t.Errorf("removing: %+v", cm.ObjectMeta)
	}
	// The namespace dropped k1; the syncer still holds the object.
	delete(ns.Labels, state+"k1")
	ns.Annotations = nil
	cm.Finalizers = []string{SyncerFinalizerPrefix + "k1"}
	if ApplyNamespaceState(cm, ns, t0) || cm.Labels[state+"k1"] != "Sync" {
		t.Errorf("held by the syncer: %+v", cm.ObjectMeta)
	}
	// The syncer let go: the label and the annotation go.
	cm.Finalizers = nil
	if !ApplyNamespaceState(cm, ns, t0) || cm.Labels[state+"k1"] != "" || cm.Annotations[deletion+"k1"] != "" {
		t.Errorf("released: %+v", cm.ObjectMeta)
	}
	// A key dropped at once with a cluster finalizer annotation is marked
	// now, not removed.
	cm.Labels[state+"k2"] = "Sync"
	cm.Annotations = map[string]string{workloadv1alpha1.ClusterFinalizerAnnotationPrefix + "k2": "coordinator"}
	if !ApplyNamespaceState(cm, ns, t0) || cm.Labels[state+"k2"] != "Sync" || cm.Annotations[deletion+"k2"] != t0.Format(time.RFC3339) {
		t.Errorf("held by a coordinator: %+v", cm.ObjectMeta)
	}
	// A key the namespace is removing is not added to a new object.
	ns.Labels[state+"k3"] = "Sync"
	ns.Annotations = map[string]string{deletion + "k3": "2026-11-28T09:00:00Z"}
	fresh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "web"}}
	if ApplyNamespaceState(fresh, ns, t0) {
		t.Errorf("a removing key added: %+v", fresh.ObjectMeta)
	}
}

func TestSyncedResources(t *testing.T) {
	compute := &apisv1alpha1.APIBinding{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{workloadv1alpha1.ComputeAPIExportAnnotationKey: "true"}}}
	compute.Status.BoundResources = []apisv1alpha1.BoundAPIResource{{Group: "apps", Resource: "deployments", StorageVersions: []string{"v1"}}}
	other := &apisv1alpha1.APIBinding{}
	other.Status.BoundResources = []apisv1alpha1.BoundAPIResource{{Group: "wildwest.dev", Resource: "cowboys", StorageVersions: []string{"v1alpha1"}}}
	bindings := []*apisv1alpha1.APIBinding{compute, other}
	for gr, want := range map[schema.GroupResource]bool{
		{Resource: "configmaps"}:                     true,
		{Resource: "secrets"}:                        true,
		{Group: "apps", Resource: "deployments"}:     true,
		{Group: "wildwest.dev", Resource: "cowboys"}: false,
		{Resource: "serviceaccounts"}:                false,
	} {
		if got := IsSynced(gr, bindings); got != want {
			t.Errorf("IsSynced(%s) = %v, want %v", gr, got, want)
		}
	}
}
