package published

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

func TestRelatedName(t *testing.T) {
	cert := func(ns, secret string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "c", "namespace": ns, "uid": "0b1c"},
			"spec":     map[string]any{"secretName": secret},
		}}
		return u
	}
	tests := []struct {
		name     string
		obj      *unstructured.Unstructured
		ref      servicesv1alpha1.RelatedResourceReference
		wantNS   string
		wantName string
		wantErr  bool
	}{
		{
			name:   "the seed's spec.secretName, namespace of the owner",
			obj:    cert("team", "my-cert"),
			ref:    servicesv1alpha1.RelatedResourceReference{Name: servicesv1alpha1.ResourceLocator{Path: "spec.secretName"}},
			wantNS: "team", wantName: "my-cert",
		},
		{
			name: "regex rewrite and a constant namespace",
			obj:  cert("team", "my-cert"),
			ref: servicesv1alpha1.RelatedResourceReference{
				Name:      servicesv1alpha1.ResourceLocator{Path: "spec.secretName", Regex: &servicesv1alpha1.RegexResourceLocator{Pattern: `^(.*)-cert$`, Replacement: "${1}-tls"}},
				Namespace: &servicesv1alpha1.ResourceLocator{Path: "metadata.uid", Regex: &servicesv1alpha1.RegexResourceLocator{Replacement: "kube-system"}},
			},
			wantNS: "kube-system", wantName: "my-tls",
		},
		{
			name:   "not named yet",
			obj:    &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "team"}}},
			ref:    servicesv1alpha1.RelatedResourceReference{Name: servicesv1alpha1.ResourceLocator{Path: "spec.secretName"}},
			wantNS: "team",
		},
		{
			name:    "a path to something other than a string",
			obj:     cert("team", "my-cert"),
			ref:     servicesv1alpha1.RelatedResourceReference{Name: servicesv1alpha1.ResourceLocator{Path: "spec"}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, name, err := RelatedName(tt.obj, tt.ref)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if ns != tt.wantNS || name != tt.wantName {
				t.Errorf("RelatedName = %q/%q, want %q/%q", ns, name, tt.wantNS, tt.wantName)
			}
		})
	}
}
