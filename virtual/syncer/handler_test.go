package syncer

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
)

func syncTarget() *workloadv1alpha1.SyncTarget {
	st := &workloadv1alpha1.SyncTarget{}
	st.Status.SyncedResources = []workloadv1alpha1.ResourceToSync{
		{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, Versions: []string{"v1"}, State: workloadv1alpha1.ResourceSchemaAcceptedState},
		{GroupResource: apisv1alpha1.GroupResource{Group: "apps", Resource: "deployments"}, Versions: []string{"v1"}, IdentityHash: "abc", State: workloadv1alpha1.ResourceSchemaAcceptedState},
		{GroupResource: apisv1alpha1.GroupResource{Resource: "services"}, Versions: []string{"v1"}, State: workloadv1alpha1.ResourceSchemaIncompatibleState},
	}
	return st
}

func TestRoute(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		verb, shard  string
		object       string
		code         int
	}{
		{"GET", "/services/syncer/comp/kind/u1/clusters/*/api/v1/configmaps", "list", "/clusters/*/api/v1/configmaps", "", 0},
		{"GET", "/services/syncer/comp/kind/u1/clusters/*/api/v1/configmaps?watch=true", "watch", "/clusters/*/api/v1/configmaps", "", 0},
		{"GET", "/services/syncer/comp/kind/u1/clusters/app/apis/apps/v1/namespaces/web/deployments/d", "get", "/clusters/app/apis/apps/v1/namespaces/web/deployments:abc/d", "/clusters/app/apis/apps/v1/namespaces/web/deployments:abc/d", 0},
		{"PUT", "/services/syncer/comp/kind/u1/clusters/app/apis/apps/v1/namespaces/web/deployments/d/status", "update", "/clusters/app/apis/apps/v1/namespaces/web/deployments:abc/d/status", "/clusters/app/apis/apps/v1/namespaces/web/deployments:abc/d", 0},
		// Not synced, incompatible, or another version.
		{"GET", "/services/syncer/comp/kind/u1/clusters/*/api/v1/secrets", "", "", "", 404},
		{"GET", "/services/syncer/comp/kind/u1/clusters/*/api/v1/services", "", "", "", 404},
		{"GET", "/services/syncer/comp/kind/u1/clusters/*/apis/apps/v1beta1/deployments", "", "", "", 404},
		// Discovery, other subresources, gets across clusters.
		{"GET", "/services/syncer/comp/kind/u1/clusters/*/apis", "", "", "", 404},
		{"GET", "/services/syncer/comp/kind/u1/clusters/app/api/v1/namespaces/web/configmaps/c/proxy", "", "", "", 404},
		{"GET", "/services/syncer/comp/kind/u1/clusters/*/api/v1/namespaces/web/configmaps/c", "", "", "", 405},
		// The syncer neither creates nor deletes; the upsyncer does, one
		// object at a time, in one cluster.
		{"POST", "/services/syncer/comp/kind/u1/clusters/app/api/v1/namespaces/web/configmaps", "", "", "", 405},
		{"DELETE", "/services/syncer/comp/kind/u1/clusters/app/api/v1/namespaces/web/configmaps/c", "", "", "", 405},
		{"POST", "/services/upsyncer/comp/kind/u1/clusters/app/api/v1/namespaces/web/configmaps", "create", "/clusters/app/api/v1/namespaces/web/configmaps", "", 0},
		{"DELETE", "/services/upsyncer/comp/kind/u1/clusters/app/api/v1/namespaces/web/configmaps/c", "delete", "/clusters/app/api/v1/namespaces/web/configmaps/c", "/clusters/app/api/v1/namespaces/web/configmaps/c", 0},
		{"POST", "/services/upsyncer/comp/kind/u1/clusters/*/api/v1/namespaces/web/configmaps", "", "", "", 405},
		{"DELETE", "/services/upsyncer/comp/kind/u1/clusters/app/api/v1/namespaces/web/configmaps", "", "", "", 405},
	} {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		prefix := PathPrefix
		if strings.HasPrefix(tc.path, UpsyncerPathPrefix) {
			prefix = UpsyncerPathPrefix
		}
		tgt, err := parse(req.URL.EscapedPath(), prefix)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		r, err := route(req, tgt, syncTarget(), prefix == UpsyncerPathPrefix)
		if tc.code != 0 {
			if status, ok := err.(apierrors.APIStatus); !ok || int(status.Status().Code) != tc.code {
				t.Errorf("%s %s: %v, want %d", tc.method, tc.path, err, tc.code)
			}
			continue
		}
		if err != nil || r.verb != tc.verb || r.shardPath != tc.shard || r.objectPath != tc.object {
			t.Errorf("%s %s: %+v %v", tc.method, tc.path, r, err)
		}
	}
}

func TestParse(t *testing.T) {
	tgt, err := parse("/services/syncer/comp/kind/u1/clusters/app/api/v1/configmaps", PathPrefix)
	if err != nil || tgt.syncTargetCluster != "comp" || tgt.syncTargetName != "kind" || tgt.uid != "u1" || tgt.cluster.Name != "app" {
		t.Errorf("parse: %+v %v", tgt, err)
	}
	for _, bad := range []string{
		"/services/syncer/comp/kind/u1/api/v1/configmaps",
		"/services/syncer/comp/kind/u1/clusters/Bad!/api",
		"/services/syncer/comp/kind/u1/clusters/app/api/v1/namespaces/%2e%2e/configmaps",
	} {
		if _, err := parse(bad, PathPrefix); err == nil {
			t.Errorf("parse(%s) accepted", bad)
		}
	}
}

func TestStateSelector(t *testing.T) {
	got, err := stateSelector(url.Values{"labelSelector": {"app=web"}}, "k1", workloadv1alpha1.ResourceStateSync)
	if err != nil || got != "app=web,state.workload.kcp.io/k1=Sync" {
		t.Errorf("stateSelector = %q, %v", got, err)
	}
	if got, _ := stateSelector(url.Values{}, "k1", workloadv1alpha1.ResourceStateUpsync); got != "state.workload.kcp.io/k1=Upsync" {
		t.Errorf("stateSelector of the upsyncer = %q", got)
	}
	if _, err := stateSelector(url.Values{"labelSelector": {"a in ("}}, "k1", workloadv1alpha1.ResourceStateSync); err == nil {
		t.Error("a bad selector is accepted")
	}
}

func TestPresent(t *testing.T) {
	h := &handler{state: workloadv1alpha1.ResourceStateSync}
	present := h.present
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"deletion.internal.workload.kcp.io/k1": "2026-11-28T10:00:00Z"}}}
	present(obj, "k1")
	if obj["metadata"].(map[string]any)["deletionTimestamp"] != "2026-11-28T10:00:00Z" {
		t.Errorf("deletion not presented: %v", obj)
	}
	own := map[string]any{"metadata": map[string]any{"deletionTimestamp": "2026-11-28T09:00:00Z", "annotations": map[string]any{"deletion.internal.workload.kcp.io/k1": "2026-11-28T10:00:00Z"}}}
	present(own, "k1")
	if own["metadata"].(map[string]any)["deletionTimestamp"] != "2026-11-28T09:00:00Z" {
		t.Errorf("an object's own deletion replaced: %v", own)
	}
	other := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"deletion.internal.workload.kcp.io/k2": "2026-11-28T10:00:00Z"}}}
	if present(other, "k1"); other["metadata"].(map[string]any)["deletionTimestamp"] != nil {
		t.Errorf("another SyncTarget's deletion presented: %v", other)
	}
}

// TestWithState: what the upsyncer writes always carries its state label.
func TestWithState(t *testing.T) {
	out, err := withState([]byte(`{"metadata":{"name":"pv","labels":{"a":"b","state.workload.kcp.io/k1":"Sync"}}}`), "k1", workloadv1alpha1.ResourceStateUpsync)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(out, &got)
	lbls := got["metadata"].(map[string]any)["labels"].(map[string]any)
	if lbls["a"] != "b" || lbls["state.workload.kcp.io/k1"] != "Upsync" {
		t.Errorf("labels %v", lbls)
	}
	if _, err := withState([]byte(`[1]`), "k1", workloadv1alpha1.ResourceStateUpsync); err == nil {
		t.Error("a body that is not an object is accepted")
	}
	up := &handler{state: workloadv1alpha1.ResourceStateUpsync}
	obj := map[string]any{"metadata": map[string]any{"annotations": map[string]any{"deletion.internal.workload.kcp.io/k1": "2026-11-28T10:00:00Z"}}}
	if up.present(obj, "k1"); obj["metadata"].(map[string]any)["deletionTimestamp"] != nil {
		t.Errorf("the upsyncer presents a deletion: %v", obj)
	}
}

func TestFinalizersOnly(t *testing.T) {
	current := map[string]any{
		"metadata": map[string]any{"name": "c", "resourceVersion": "5", "labels": map[string]any{"state.workload.kcp.io/k1": "Sync"}},
		"data":     map[string]any{"a": "1"},
	}
	sent := `{"metadata":{"name":"c","resourceVersion":"4","finalizers":["workload.kcp.io/syncer-k1"],"labels":{}},"data":{"a":"changed"}}`
	out, err := finalizersOnly(current, []byte(sent))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(out, &got)
	meta := got["metadata"].(map[string]any)
	if got["data"].(map[string]any)["a"] != "1" || meta["resourceVersion"] != "4" || meta["labels"].(map[string]any)["state.workload.kcp.io/k1"] != "Sync" ||
		len(meta["finalizers"].([]any)) != 1 {
		t.Errorf("finalizersOnly = %s", out)
	}
}
