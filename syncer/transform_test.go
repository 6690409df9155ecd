package syncer

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var testLocator = NamespaceLocator{
	SyncTarget: SyncTargetLocator{Cluster: "root:compute", Name: "kind", UID: "0a1b2c3d"},
	Cluster:    "2x8wo5bj4mvjn3kq",
	Namespace:  "default",
}

// TestDownstreamNamespace: downstream namespaces are named as kcp's syncer
// names them. The expected values were computed apart from this code, in
// Python: "kcp-" + base36(sha224(json))[:12] of the locator's JSON
// {"syncTarget":{"cluster":"root:compute","name":"kind","uid":"0a1b2c3d"},"cluster":"2x8wo5bj4mvjn3kq","namespace":"default"},
// and base62(sha224) of the same JSON with "namespace":"" for the tenant.
func TestDownstreamNamespace(t *testing.T) {
	if got := DownstreamNamespace(testLocator); got != "kcp-1wdhmziakix5" {
		t.Errorf("DownstreamNamespace = %q", got)
	}
	if got := TenantID(testLocator); got != "7DI0LZr2aGkcFUjYc2lBoZ5qc5v7oUhJCoGfyU" {
		t.Errorf("TenantID = %q", got)
	}
	other := testLocator
	other.Namespace = "web"
	if DownstreamNamespace(other) == DownstreamNamespace(testLocator) || TenantID(other) != TenantID(testLocator) {
		t.Error("another namespace of the workspace: a namespace of its own, the same tenant")
	}
	l, ok := LocatorOf(map[string]string{NamespaceLocatorAnnotation: `{"syncTarget":{"cluster":"root:compute","name":"kind","uid":"0a1b2c3d"},"cluster":"2x8wo5bj4mvjn3kq","namespace":"default"}`})
	if !ok || l != testLocator {
		t.Errorf("LocatorOf = %+v, %t", l, ok)
	}
	if _, ok := LocatorOf(map[string]string{NamespaceLocatorAnnotation: "{"}); ok {
		t.Error("LocatorOf accepted a broken annotation")
	}
}

func deployment() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "kuard", "namespace": "default", "uid": "u1", "resourceVersion": "12", "generation": int64(3),
			"creationTimestamp": "2026-11-28T00:00:00Z", "finalizers": []any{"workload.kcp.io/syncer-k"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "x"}},
			"managedFields":   []any{map[string]any{"manager": "kubectl"}},
			"labels":          map[string]any{"app": "kuard", "state.workload.kcp.io/k": "Sync"},
			"annotations": map[string]any{
				"kcp.io/cluster": "2x8wo5bj4mvjn3kq", "deletion.internal.workload.kcp.io/k": "2026-11-28T00:00:00Z",
				"finalizers.workload.kcp.io/k": "x", "experimental.status.workload.kcp.io/k": "{}", "team": "a",
			},
		},
		"spec":   map[string]any{"replicas": int64(1)},
		"status": map[string]any{"readyReplicas": int64(1)},
	}}
}

// TestDesiredDownstream: what goes down is the object without its status,
// identity, owners, finalizers and placement machinery, in the downstream
// namespace with the SyncTarget's label; its hash follows the spec and not
// the status.
func TestDesiredDownstream(t *testing.T) {
	up := deployment()
	d, err := desiredDownstream(up, "deployments", "kcp-1wdhmziakix5", "k")
	if err != nil {
		t.Fatal(err)
	}
	if d.GetName() != "kuard" || d.GetNamespace() != "kcp-1wdhmziakix5" || d.GetUID() != "" || d.GetResourceVersion() != "" ||
		d.GetGeneration() != 0 || len(d.GetFinalizers()) != 0 || len(d.GetOwnerReferences()) != 0 || len(d.GetManagedFields()) != 0 ||
		d.GetCreationTimestamp() != (metav1.Time{}) {
		t.Errorf("metadata: %v", d.Object["metadata"])
	}
	if _, ok := d.Object["status"]; ok {
		t.Error("the status goes down")
	}
	if l := d.GetLabels(); len(l) != 2 || l["app"] != "kuard" || l["internal.workload.kcp.io/cluster"] != "k" {
		t.Errorf("labels: %v", l)
	}
	a := d.GetAnnotations()
	if len(a) != 2 || a["team"] != "a" || a[AppliedAnnotation] == "" {
		t.Errorf("annotations: %v", a)
	}
	if up.GetNamespace() != "default" || up.Object["status"] == nil {
		t.Error("the upstream object was changed")
	}

	statusOnly := deployment()
	statusOnly.Object["status"] = map[string]any{"readyReplicas": int64(7)}
	statusOnly.SetResourceVersion("13")
	d2, _ := desiredDownstream(statusOnly, "deployments", "kcp-1wdhmziakix5", "k")
	if d2.GetAnnotations()[AppliedAnnotation] != a[AppliedAnnotation] {
		t.Error("a status change changes what is applied")
	}
	scaled := deployment()
	scaled.Object["spec"] = map[string]any{"replicas": int64(3)}
	d3, _ := desiredDownstream(scaled, "deployments", "kcp-1wdhmziakix5", "k")
	if d3.GetAnnotations()[AppliedAnnotation] == a[AppliedAnnotation] {
		t.Error("a spec change does not change what is applied")
	}
}

// TestDownstreamNames: kube-root-ca.crt, which every physical namespace
// has, is synced as kcp-root-ca.crt; service account token Secrets are not
// synced; Services leave their cluster IP behind unless headless.
func TestDownstreamNames(t *testing.T) {
	if downstreamName("configmaps", "kube-root-ca.crt") != "kcp-root-ca.crt" || upstreamName("configmaps", "kcp-root-ca.crt") != "kube-root-ca.crt" ||
		downstreamName("secrets", "kube-root-ca.crt") != "kube-root-ca.crt" || downstreamName("configmaps", "a") != "a" {
		t.Error("downstreamName/upstreamName")
	}
	token := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token"}}
	opaque := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque"}}
	if !skipped(token) || skipped(opaque) {
		t.Error("skipped")
	}
	for ip, kept := range map[string]bool{"10.0.0.1": false, "None": true} {
		svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "web", "namespace": "default"},
			"spec":     map[string]any{"clusterIP": ip, "clusterIPs": []any{ip}}}}
		d, err := desiredDownstream(svc, "services", "kcp-x", "k")
		if err != nil {
			t.Fatal(err)
		}
		if got, found, _ := unstructured.NestedString(d.Object, "spec", "clusterIP"); found != kept || (kept && got != ip) {
			t.Errorf("clusterIP %s downstream: %q (found %t)", ip, got, found)
		}
	}
}

// TestMergeSchemaNames: an imported schema replaces the export's schema of
// the same resource and is added otherwise.
func TestMergeSchemaNames(t *testing.T) {
	got := mergeSchemaNames([]string{"v1.deployments.apps", "iaaa.widgets.example.com"}, []string{"ibbb.widgets.example.com", "iccc.gadgets.example.com"})
	want := []string{"v1.deployments.apps", "ibbb.widgets.example.com", "iccc.gadgets.example.com"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeSchemaNames = %v, want %v", got, want)
	}
}

// TestDesiredUpstream: an upsynced PersistentVolume is the downstream one
// bound to the workspace's claim; its hash follows its spec, not its
// status.
func TestDesiredUpstream(t *testing.T) {
	down := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolume",
		"metadata": map[string]any{"name": "pvc-123", "uid": "u", "resourceVersion": "9", "labels": map[string]any{"topology": "a"},
			"annotations": map[string]any{"pv.kubernetes.io/provisioned-by": "csi"}},
		"spec": map[string]any{"capacity": map[string]any{"storage": "1Gi"},
			"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "namespace": "kcp-1wdhmziakix5", "name": "data", "uid": "down-uid", "resourceVersion": "4"}},
		"status": map[string]any{"phase": "Bound"},
	}}
	up, err := desiredUpstream(down, "default", "data")
	if err != nil {
		t.Fatal(err)
	}
	ref, _, _ := unstructured.NestedMap(up.Object, "spec", "claimRef")
	if ref["namespace"] != "default" || ref["name"] != "data" || ref["uid"] != nil || ref["resourceVersion"] != nil {
		t.Errorf("claimRef %v", ref)
	}
	if up.GetName() != "pvc-123" || up.GetUID() != "" || up.GetResourceVersion() != "" || up.GetLabels()["topology"] != "a" ||
		up.GetAnnotations()["pv.kubernetes.io/provisioned-by"] != "csi" || up.GetAnnotations()[AppliedAnnotation] == "" {
		t.Errorf("metadata %v", up.Object["metadata"])
	}
	if _, ok := up.Object["status"]; ok {
		t.Error("the status is in the object written")
	}
	if c, _, _ := unstructured.NestedString(down.Object, "spec", "claimRef", "namespace"); c != "kcp-1wdhmziakix5" {
		t.Error("the downstream object was changed")
	}
	released := down.DeepCopy()
	released.Object["status"] = map[string]any{"phase": "Released"}
	again, _ := desiredUpstream(released, "default", "data")
	if again.GetAnnotations()[AppliedAnnotation] != up.GetAnnotations()[AppliedAnnotation] {
		t.Error("a status change changes the upsynced object")
	}
}
