package secrets

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func newSecret(typ corev1.SecretType, data map[string][]byte, mutate ...func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default", ResourceVersion: "1"},
		Type:       typ,
		Data:       data,
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func TestValidate(t *testing.T) {
	saAnnotation := func(s *corev1.Secret) {
		s.Annotations = map[string]string{corev1.ServiceAccountNameKey: "builder"}
	}
	tests := []struct {
		name      string
		secret    *corev1.Secret
		wantField string // empty: valid
	}{
		{name: "opaque", secret: newSecret(corev1.SecretTypeOpaque, map[string][]byte{"password": []byte("x")})},
		{name: "custom type", secret: newSecret("example.com/thing", nil)},
		{name: "bad key", secret: newSecret(corev1.SecretTypeOpaque, map[string][]byte{"a b": nil}), wantField: "data[a b]"},
		{name: "bad name", secret: newSecret(corev1.SecretTypeOpaque, nil, func(s *corev1.Secret) { s.Name = "-x" }), wantField: "metadata.name"},
		{name: "too large", secret: newSecret(corev1.SecretTypeOpaque, map[string][]byte{"a": make([]byte, corev1.MaxSecretSize+1)}), wantField: "data"},
		{name: "service account token", secret: newSecret(corev1.SecretTypeServiceAccountToken, nil, saAnnotation)},
		{name: "service account token without annotation", secret: newSecret(corev1.SecretTypeServiceAccountToken, nil), wantField: "metadata.annotations[kubernetes.io/service-account.name]"},
		{name: "dockerconfigjson", secret: newSecret(corev1.SecretTypeDockerConfigJson, map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)})},
		{name: "dockerconfigjson missing", secret: newSecret(corev1.SecretTypeDockerConfigJson, nil), wantField: "data[.dockerconfigjson]"},
		{name: "dockerconfigjson not json", secret: newSecret(corev1.SecretTypeDockerConfigJson, map[string][]byte{".dockerconfigjson": []byte(`{`)}), wantField: "data[.dockerconfigjson]"},
		{name: "dockercfg", secret: newSecret(corev1.SecretTypeDockercfg, map[string][]byte{".dockercfg": []byte(`{}`)})},
		{name: "dockercfg missing", secret: newSecret(corev1.SecretTypeDockercfg, nil), wantField: "data[.dockercfg]"},
		{name: "basic auth username only", secret: newSecret(corev1.SecretTypeBasicAuth, map[string][]byte{"username": []byte("u")})},
		{name: "basic auth empty password only", secret: newSecret(corev1.SecretTypeBasicAuth, map[string][]byte{"password": nil})},
		{name: "basic auth missing both", secret: newSecret(corev1.SecretTypeBasicAuth, map[string][]byte{"token": nil}), wantField: "data[username]"},
		{name: "ssh auth", secret: newSecret(corev1.SecretTypeSSHAuth, map[string][]byte{"ssh-privatekey": []byte("k")})},
		{name: "ssh auth empty key", secret: newSecret(corev1.SecretTypeSSHAuth, map[string][]byte{"ssh-privatekey": nil}), wantField: "data[ssh-privatekey]"},
		{name: "tls", secret: newSecret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": nil, "tls.key": nil})},
		{name: "tls missing cert", secret: newSecret(corev1.SecretTypeTLS, map[string][]byte{"tls.key": nil}), wantField: "data[tls.crt]"},
		{name: "tls missing key", secret: newSecret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": nil}), wantField: "data[tls.key]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.secret)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) == 0 || errs[0].Field != tt.wantField {
				t.Fatalf("want first error on %q, got %v", tt.wantField, errs)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	data := func() map[string][]byte { return map[string][]byte{"a": []byte("1")} }
	immutable := func(s *corev1.Secret) { s.Immutable = ptr.To(true) }
	tests := []struct {
		name      string
		old, new  *corev1.Secret
		wantField string
	}{
		{name: "change data", old: newSecret(corev1.SecretTypeOpaque, data()), new: newSecret(corev1.SecretTypeOpaque, map[string][]byte{"b": nil})},
		{name: "change type", old: newSecret(corev1.SecretTypeOpaque, data()), new: newSecret("example.com/other", data()), wantField: "type"},
		{name: "immutable relabel", old: newSecret(corev1.SecretTypeOpaque, data(), immutable), new: newSecret(corev1.SecretTypeOpaque, data(), immutable, func(s *corev1.Secret) {
			s.Labels = map[string]string{"a": "b"}
		})},
		{name: "immutable data", old: newSecret(corev1.SecretTypeOpaque, data(), immutable), new: newSecret(corev1.SecretTypeOpaque, map[string][]byte{"a": []byte("2")}, immutable), wantField: "data"},
		{name: "immutable unset", old: newSecret(corev1.SecretTypeOpaque, data(), immutable), new: newSecret(corev1.SecretTypeOpaque, data()), wantField: "immutable"},
		{name: "new object must be valid", old: newSecret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": nil, "tls.key": nil}), new: newSecret(corev1.SecretTypeTLS, nil), wantField: "data[tls.crt]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateUpdate(tt.new, tt.old)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) == 0 || errs[0].Field != tt.wantField {
				t.Fatalf("want first error on %q, got %v", tt.wantField, errs)
			}
		})
	}
}

func TestValidateErrorsRedactContents(t *testing.T) {
	s := newSecret(corev1.SecretTypeDockerConfigJson, map[string][]byte{".dockerconfigjson": []byte("hunter2")})
	for _, err := range Validate(s) {
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error leaks the secret: %v", err)
		}
	}
}
