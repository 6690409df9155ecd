package replication

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

func TestReplica(t *testing.T) {
	export := &apisv1alpha1.APIExport{
		ObjectMeta: metav1.ObjectMeta{Name: "wildwest.dev", ResourceVersion: "42", UID: "u1",
			Annotations:   map[string]string{"kcp.io/cluster": "c1"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec:   apisv1alpha1.APIExportSpec{LatestResourceSchemas: []string{"v1.cowboys.wildwest.dev"}},
		Status: apisv1alpha1.APIExportStatus{IdentityHash: "abc"},
	}
	r, err := replica(export, apisv1alpha1.SchemeGroupVersion.WithKind("APIExport"), "root:org")
	if err != nil {
		t.Fatal(err)
	}
	if r.GetAPIVersion() != "apis.kcp.io/v1alpha1" || r.GetKind() != "APIExport" {
		t.Errorf("apiVersion/kind = %s/%s", r.GetAPIVersion(), r.GetKind())
	}
	if r.GetResourceVersion() != "" || r.GetManagedFields() != nil {
		t.Errorf("resourceVersion %q and managedFields %v are kept", r.GetResourceVersion(), r.GetManagedFields())
	}
	if r.GetAnnotations()["kcp.io/path"] != "root:org" || r.GetAnnotations()["kcp.io/cluster"] != "c1" || r.GetUID() != "u1" {
		t.Errorf("metadata = %v, uid %s", r.GetAnnotations(), r.GetUID())
	}
	if h, _, _ := unstructured.NestedString(r.Object, "status", "identityHash"); h != "abc" {
		t.Errorf("status.identityHash = %q", h)
	}
	if export.Annotations["kcp.io/path"] != "" {
		t.Error("the local object was changed")
	}

	// The cache's own fields do not make a replica stale; a change does.
	cached := r.DeepCopy()
	cached.SetResourceVersion("7")
	a := cached.GetAnnotations()
	a["kcp.io/shard"] = "root"
	cached.SetAnnotations(a)
	if !upToDate(r, cached) {
		t.Error("a replica differing only in resourceVersion and kcp.io/shard is stale")
	}
	_ = unstructured.SetNestedField(cached.Object, "def", "status", "identityHash")
	if upToDate(r, cached) {
		t.Error("a replica with another identity hash is up to date")
	}

	lc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "LogicalCluster",
		"metadata": map[string]any{"name": "cluster", "uid": "u2", "resourceVersion": "9",
			"annotations": map[string]any{"kcp.io/cluster": "c2", "kcp.io/path": "root:org", "unrelated": "x"}},
		"spec":   map[string]any{"owner": map[string]any{"name": "org"}, "initializers": []any{"a"}},
		"status": map[string]any{"phase": "Ready"},
	}}
	r, err = replica(lc, lc.GroupVersionKind(), "root:org")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Object["status"]; ok {
		t.Error("the phase of a LogicalCluster is replicated")
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(r.Object, "spec", "initializers"); ok {
		t.Error("spec.initializers of a LogicalCluster are replicated")
	}
	if _, ok, _ := unstructured.NestedMap(r.Object, "spec", "owner"); !ok {
		t.Error("spec.owner of a LogicalCluster is not replicated")
	}
	if r.GetAnnotations()["unrelated"] != "" || r.GetAnnotations()["kcp.io/path"] != "root:org" {
		t.Errorf("LogicalCluster replica annotations = %v", r.GetAnnotations())
	}
}

func TestGrantsKCPAccess(t *testing.T) {
	for _, tc := range []struct {
		rule rbacv1.PolicyRule
		want bool
	}{
		{rbacv1.PolicyRule{APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports"}, Verbs: []string{"bind"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports/content"}, Verbs: []string{"*"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspacetypes"}, Verbs: []string{"use"}}, true},
		{rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}, false},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}, false},
	} {
		if got := grantsKCPAccess(tc.rule); got != tc.want {
			t.Errorf("grantsKCPAccess(%v) = %v, want %v", tc.rule, got, tc.want)
		}
	}
}
