package objects

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	servicesv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/services/v1alpha1"
)

func TestSelected(t *testing.T) {
	object := func(namespace string, labels map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetNamespace(namespace)
		u.SetLabels(labels)
		return u
	}
	seed := &servicesv1alpha1.ResourceFilter{Namespace: "my-app", Resource: &metav1.LabelSelector{MatchLabels: map[string]string{"foo": "bar"}}}
	tests := []struct {
		name   string
		filter *servicesv1alpha1.ResourceFilter
		obj    *unstructured.Unstructured
		want   bool
	}{
		{"no filter", nil, object("any", nil), true},
		{"the seed's filter, matched", seed, object("my-app", map[string]string{"foo": "bar"}), true},
		{"another namespace", seed, object("other", map[string]string{"foo": "bar"}), false},
		{"labels not matched", seed, object("my-app", map[string]string{"foo": "baz"}), false},
		{"namespace only", &servicesv1alpha1.ResourceFilter{Namespace: "my-app"}, object("my-app", nil), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &objectSync{target: Target{PublishedResource: &servicesv1alpha1.PublishedResource{Spec: servicesv1alpha1.PublishedResourceSpec{Filter: tt.filter}}}}
			if got := s.selected(tt.obj); got != tt.want {
				t.Errorf("selected = %t, want %t", got, tt.want)
			}
		})
	}
}
