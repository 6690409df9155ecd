package objects

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tessera-dev/tessera/syncer/servlet/published"
)

func obj(content map[string]any, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x/v1", "kind": "X", "metadata": map[string]any{"name": "a"}, "status": map[string]any{"ready": true}}}
	for k, v := range content {
		u.Object[k] = v
	}
	if annotations != nil {
		u.SetAnnotations(annotations)
	}
	return u
}

func TestContentPatch(t *testing.T) {
	state := func(content map[string]any) map[string]string {
		b, _ := json.Marshal(content)
		return map[string]string{AnnotationLastKnownState: string(b)}
	}
	tests := []struct {
		name   string
		remote map[string]any
		local  *unstructured.Unstructured
		want   map[string]any // nil: no patch
	}{
		{
			name:   "in sync",
			remote: map[string]any{"spec": map[string]any{"secretName": "s"}},
			local:  obj(map[string]any{"spec": map[string]any{"secretName": "s"}}, state(map[string]any{"spec": map[string]any{"secretName": "s"}})),
		},
		{
			name:   "a changed field follows, a field the service cluster defaulted stays",
			remote: map[string]any{"spec": map[string]any{"secretName": "t"}},
			local:  obj(map[string]any{"spec": map[string]any{"secretName": "s", "duration": "90d"}}, state(map[string]any{"spec": map[string]any{"secretName": "s"}})),
			want: map[string]any{
				"spec":     map[string]any{"secretName": "t"},
				"metadata": map[string]any{"annotations": map[string]any{AnnotationLastKnownState: `{"spec":{"secretName":"t"}}`}},
			},
		},
		{
			name:   "a field the user removed goes; other top-level fields sync too",
			remote: map[string]any{"spec": map[string]any{}, "roleRef": "r"},
			local:  obj(map[string]any{"spec": map[string]any{"secretName": "s"}}, state(map[string]any{"spec": map[string]any{"secretName": "s"}})),
			want: map[string]any{
				"spec":     map[string]any{"secretName": nil},
				"roleRef":  "r",
				"metadata": map[string]any{"annotations": map[string]any{AnnotationLastKnownState: `{"roleRef":"r","spec":{}}`}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, err := ContentPatch(obj(tt.remote, nil), tt.local)
			check(t, patch, err, tt.want)
		})
	}

	// Labels and annotations: the user's follow three-way, the service
	// cluster's own stay, kcp's never come down.
	spec := map[string]any{"spec": map[string]any{}}
	remote := obj(spec, map[string]string{"kcp.io/cluster": "abc", "note": "new"})
	remote.SetLabels(map[string]string{"team": "a", "tier": "gold"})
	local := obj(spec, map[string]string{AnnotationLastKnownState: `{"metadata":{"labels":{"gone":"x","team":"a"}},"spec":{}}`, "controller": "kept"})
	local.SetLabels(map[string]string{"gone": "x", "team": "a", "service-side": "kept", LabelRemoteCluster: "abc"})
	patch, err := ContentPatch(remote, local)
	check(t, patch, err, map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{"gone": nil, "tier": "gold"},
		"annotations": map[string]any{"note": "new", AnnotationLastKnownState: `{"metadata":{"annotations":{"note":"new"},"labels":{"team":"a","tier":"gold"}},"spec":{}}`},
	}})
}

func check(t *testing.T, patch []byte, err error, want map[string]any) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if want == nil {
		if patch != nil {
			t.Fatalf("patch %s, want none", patch)
		}
		return
	}
	var got map[string]any
	if err := json.Unmarshal(patch, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
}

func TestRemoteOf(t *testing.T) {
	r := published.Remote{Cluster: "1084s8ceexsehjm2", Namespace: "team", Name: "my-cert"}
	remote := obj(map[string]any{"spec": map[string]any{}}, nil)
	remote.SetName(r.Name)
	local, err := NewLocal(remote, "cert-manager.io/v1", "Certificate", "kube-system", "x", RemoteLabels(r))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := RemoteOf(local.GetLabels(), local.GetAnnotations())
	if !ok || got != r {
		t.Errorf("RemoteOf(NewLocal) = %+v, %t; want %+v", got, ok, r)
	}
	if !RemoteSelector(r).Matches(labels.Set(local.GetLabels())) {
		t.Errorf("RemoteSelector does not find the local copy")
	}
	if RemoteSelector(published.Remote{Cluster: r.Cluster, Name: r.Name}).Matches(labels.Set(local.GetLabels())) {
		t.Errorf("a cluster-scoped remote's selector finds a namespaced one's copy")
	}
	lbls := local.GetLabels()
	delete(lbls, LabelRemoteCluster)
	if _, ok := RemoteOf(lbls, local.GetAnnotations()); ok {
		t.Errorf("RemoteOf of mangled labels succeeded")
	}
}
