package configmaps

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func newConfigMap(mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default", ResourceVersion: "1"},
		Data:       map[string]string{"app.properties": "a=b"},
	}
	if mutate != nil {
		mutate(cm)
	}
	return cm
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		cm        *corev1.ConfigMap
		wantField string // empty: valid
	}{
		{name: "valid", cm: newConfigMap(nil)},
		{name: "valid binary data", cm: newConfigMap(func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"logo.png": {1, 2}} })},
		{name: "dotted and dashed keys", cm: newConfigMap(func(cm *corev1.ConfigMap) { cm.Data = map[string]string{".env": "", "a-b_c.d": ""} })},
		{name: "missing namespace", cm: newConfigMap(func(cm *corev1.ConfigMap) { cm.Namespace = "" }), wantField: "metadata.namespace"},
		{name: "bad name", cm: newConfigMap(func(cm *corev1.ConfigMap) { cm.Name = "Not_Valid" }), wantField: "metadata.name"},
		{name: "bad data key", cm: newConfigMap(func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"a/b": ""} }), wantField: "data[a/b]"},
		{name: "bad binary key", cm: newConfigMap(func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"..": nil} }), wantField: "binaryData[..]"},
		{name: "key in data and binaryData", cm: newConfigMap(func(cm *corev1.ConfigMap) { cm.BinaryData = map[string][]byte{"app.properties": nil} }), wantField: "data[app.properties]"},
		{name: "over 1MiB", cm: newConfigMap(func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize/2)}
			cm.BinaryData = map[string][]byte{"b": make([]byte, corev1.MaxSecretSize/2+1)}
		}), wantField: "[]"},
		{name: "exactly 1MiB", cm: newConfigMap(func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"a": strings.Repeat("x", corev1.MaxSecretSize)}
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.cm)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("want an error on %s, got none", tt.wantField)
			}
			if got := errs[0].Field; got != tt.wantField {
				t.Errorf("error on %q, want %q: %v", got, tt.wantField, errs)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	immutable := func(cm *corev1.ConfigMap) { cm.Immutable = ptr.To(true) }
	tests := []struct {
		name      string
		old, new  *corev1.ConfigMap
		wantField string
	}{
		{name: "change data", old: newConfigMap(nil), new: newConfigMap(func(cm *corev1.ConfigMap) { cm.Data["x"] = "y" })},
		{name: "make immutable", old: newConfigMap(nil), new: newConfigMap(immutable)},
		{name: "immutable keeps labels changeable", old: newConfigMap(immutable), new: newConfigMap(func(cm *corev1.ConfigMap) {
			immutable(cm)
			cm.Labels = map[string]string{"a": "b"}
		})},
		{name: "immutable data", old: newConfigMap(immutable), new: newConfigMap(func(cm *corev1.ConfigMap) {
			immutable(cm)
			cm.Data["x"] = "y"
		}), wantField: "data"},
		{name: "immutable binaryData", old: newConfigMap(immutable), new: newConfigMap(func(cm *corev1.ConfigMap) {
			immutable(cm)
			cm.BinaryData = map[string][]byte{"x": nil}
		}), wantField: "binaryData"},
		{name: "immutable cannot be unset", old: newConfigMap(immutable), new: newConfigMap(nil), wantField: "immutable"},
		{name: "immutable cannot be set false", old: newConfigMap(immutable), new: newConfigMap(func(cm *corev1.ConfigMap) { cm.Immutable = ptr.To(false) }), wantField: "immutable"},
		{name: "name is immutable", old: newConfigMap(nil), new: newConfigMap(func(cm *corev1.ConfigMap) { cm.Name = "other" }), wantField: "metadata.name"},
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
