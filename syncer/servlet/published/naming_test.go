package published

import (
	"testing"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

func TestHash(t *testing.T) {
	if got := Hash(""); got != "da39a3ee5e6b4b0d3255" {
		t.Errorf("Hash(\"\") = %q, want the first 20 hex digits of SHA-1 of nothing", got)
	}
	if got := len(Hash("my-cert")); got != 20 {
		t.Errorf("len(Hash) = %d, want 20", got)
	}
}

func TestLocalName(t *testing.T) {
	r := Remote{Cluster: "1084s8ceexsehjm2", Namespace: "team", Name: "my-cert"}
	tests := []struct {
		name          string
		naming        *servicesv1alpha1.ResourceNaming
		namespaced    bool
		wantNamespace string
		wantName      string
	}{
		{
			name:          "defaults: a namespace per workspace, hashed names",
			namespaced:    true,
			wantNamespace: "1084s8ceexsehjm2",
			wantName:      Hash("team") + "-" + Hash("my-cert"),
		},
		{
			name:          "the seed's example",
			naming:        &servicesv1alpha1.ResourceNaming{Namespace: "kube-system", Name: "$remoteClusterName-$remoteNamespaceHash-$remoteNameHash"},
			namespaced:    true,
			wantNamespace: "kube-system",
			wantName:      "1084s8ceexsehjm2-" + Hash("team") + "-" + Hash("my-cert"),
		},
		{
			name:          "plain placeholders beside their hashed forms",
			naming:        &servicesv1alpha1.ResourceNaming{Namespace: "$remoteNamespace", Name: "$remoteName-$remoteNameHash"},
			namespaced:    true,
			wantNamespace: "team",
			wantName:      "my-cert-" + Hash("my-cert"),
		},
		{
			name:     "cluster-scoped local resource: no namespace",
			naming:   &servicesv1alpha1.ResourceNaming{Name: "cert-$remoteNameHash"},
			wantName: "cert-" + Hash("my-cert"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, name := LocalName(tt.naming, r, tt.namespaced)
			if ns != tt.wantNamespace || name != tt.wantName {
				t.Errorf("LocalName = %q/%q, want %q/%q", ns, name, tt.wantNamespace, tt.wantName)
			}
		})
	}
}
