package store

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAddKnownTypes(t *testing.T) {
	s := runtime.NewScheme()
	AddKnownTypes(s, corev1.SchemeGroupVersion, &corev1.ConfigMap{}, &corev1.ConfigMapList{})
	internal := schema.GroupVersion{Group: corev1.GroupName, Version: runtime.APIVersionInternal}
	for _, gvk := range []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithKind("ConfigMapList"),
		internal.WithKind("ConfigMap"), internal.WithKind("ConfigMapList"),
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("%s is not registered", gvk)
		}
	}
	// The internal version is the same Go type: converting is a copy.
	out, err := s.ConvertToVersion(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, internal)
	if err != nil {
		t.Fatal(err)
	}
	if cm, ok := out.(*corev1.ConfigMap); !ok || cm.Name != "a" || cm.Data["k"] != "v" {
		t.Errorf("internal object %#v", out)
	}
}

func TestAddDefaulting(t *testing.T) {
	s := runtime.NewScheme()
	AddDefaulting(s, func(secret *corev1.Secret) {
		if secret.Type == "" {
			secret.Type = corev1.SecretTypeOpaque
		}
	}, func(l *corev1.SecretList) []corev1.Secret { return l.Items })

	secret := &corev1.Secret{}
	s.Default(secret)
	if secret.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret type %q, want Opaque", secret.Type)
	}
	list := &corev1.SecretList{Items: []corev1.Secret{{}, {Type: corev1.SecretTypeTLS}}}
	s.Default(list)
	if list.Items[0].Type != corev1.SecretTypeOpaque || list.Items[1].Type != corev1.SecretTypeTLS {
		t.Errorf("list item types %q and %q, want Opaque and TLS", list.Items[0].Type, list.Items[1].Type)
	}
}

func TestAddFieldLabels(t *testing.T) {
	s := runtime.NewScheme()
	typeOnly := func(label, value string) (string, string, error) {
		if label != "type" {
			return "", "", fmt.Errorf("field label not supported: %s", label)
		}
		return label, value, nil
	}
	if err := AddFieldLabels(s, corev1.SchemeGroupVersion, typeOnly, "Secret", "Event"); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"Secret", "Event"} {
		gvk := corev1.SchemeGroupVersion.WithKind(kind)
		if _, _, err := s.ConvertFieldLabel(gvk, "type", "a"); err != nil {
			t.Errorf("%s type: %v", kind, err)
		}
		// Without the registered conversion, the scheme would accept
		// metadata.name.
		if _, _, err := s.ConvertFieldLabel(gvk, "metadata.name", "a"); err == nil {
			t.Errorf("%s metadata.name: want an error", kind)
		}
	}
}
