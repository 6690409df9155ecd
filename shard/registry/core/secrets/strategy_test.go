package secrets

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	certutil "k8s.io/client-go/util/cert"
)

func TestSetDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   corev1.Secret
		want corev1.Secret
	}{
		{name: "type defaults to Opaque", in: corev1.Secret{}, want: corev1.Secret{Type: corev1.SecretTypeOpaque}},
		{name: "type is kept", in: corev1.Secret{Type: corev1.SecretTypeTLS}, want: corev1.Secret{Type: corev1.SecretTypeTLS}},
		{
			name: "stringData moves into data and wins",
			in:   corev1.Secret{Type: "x", Data: map[string][]byte{"a": []byte("old"), "b": []byte("b")}, StringData: map[string]string{"a": "new", "c": "c"}},
			want: corev1.Secret{Type: "x", Data: map[string][]byte{"a": []byte("new"), "b": []byte("b"), "c": []byte("c")}},
		},
		{
			name: "stringData without data",
			in:   corev1.Secret{Type: "x", StringData: map[string]string{"a": "1"}},
			want: corev1.Secret{Type: "x", Data: map[string][]byte{"a": []byte("1")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.DeepCopy()
			SetDefaults(got)
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchemeDefaultsSecrets(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	s.Default(secret)
	if secret.Type != corev1.SecretTypeOpaque {
		t.Errorf("type %q after scheme defaulting, want Opaque", secret.Type)
	}
	list := &corev1.SecretList{Items: []corev1.Secret{{}}}
	s.Default(list)
	if list.Items[0].Type != corev1.SecretTypeOpaque {
		t.Errorf("list item type %q after scheme defaulting, want Opaque", list.Items[0].Type)
	}
	if _, _, err := s.ConvertFieldLabel(corev1.SchemeGroupVersion.WithKind("Secret"), "type", "Opaque"); err != nil {
		t.Errorf("field label type: %v", err)
	}
	if _, _, err := s.ConvertFieldLabel(corev1.SchemeGroupVersion.WithKind("Secret"), "data", "x"); err == nil {
		t.Error("field label data: want an error")
	}
}

func TestPrepareMergesStringData(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme())
	secret := &corev1.Secret{StringData: map[string]string{"a": "1"}}
	strategy.PrepareForCreate(t.Context(), secret)
	if string(secret.Data["a"]) != "1" || secret.StringData != nil {
		t.Errorf("after create: data %v stringData %v", secret.Data, secret.StringData)
	}
	updated := &corev1.Secret{Data: map[string][]byte{"a": []byte("1")}, StringData: map[string]string{"b": "2"}}
	strategy.PrepareForUpdate(t.Context(), updated, secret)
	if string(updated.Data["b"]) != "2" || updated.StringData != nil {
		t.Errorf("after update: data %v stringData %v", updated.Data, updated.StringData)
	}
}

func TestWarnings(t *testing.T) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("example.com", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := certutil.GenerateSelfSignedCertKey("other.example.com", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	strategy := NewStrategy(runtime.NewScheme())
	matching := newSecret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM})
	if w := strategy.WarningsOnCreate(t.Context(), matching); len(w) != 0 {
		t.Errorf("matching key pair: warnings %v", w)
	}
	mismatched := newSecret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": certPEM, "tls.key": otherKey})
	if w := strategy.WarningsOnCreate(t.Context(), mismatched); len(w) != 1 {
		t.Errorf("mismatched key pair: warnings %v, want one", w)
	}
	if w := strategy.WarningsOnUpdate(t.Context(), mismatched, matching); len(w) != 1 {
		t.Errorf("mismatched key pair on update: warnings %v, want one", w)
	}
	if w := strategy.WarningsOnCreate(t.Context(), newSecret(corev1.SecretTypeOpaque, nil)); len(w) != 0 {
		t.Errorf("opaque: warnings %v", w)
	}
}

func TestGetAttrs(t *testing.T) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "ns", Labels: map[string]string{"app": "a"}},
		Type:       corev1.SecretTypeTLS,
	}
	labels, fieldSet, err := GetAttrs(secret)
	if err != nil {
		t.Fatal(err)
	}
	if labels["app"] != "a" {
		t.Errorf("labels %v", labels)
	}
	want := fields.Set{"metadata.name": "creds", "metadata.namespace": "ns", "type": "kubernetes.io/tls"}
	if diff := cmp.Diff(want, fieldSet); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if _, _, err := GetAttrs(&corev1.ConfigMap{}); err == nil {
		t.Error("GetAttrs of a configmap: want an error")
	}
}
