package serviceaccounts

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newServiceAccount(mutate ...func(*corev1.ServiceAccount)) *corev1.ServiceAccount {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder", Namespace: "default", ResourceVersion: "1"}}
	for _, m := range mutate {
		m(sa)
	}
	return sa
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		sa        *corev1.ServiceAccount
		wantField string
	}{
		{name: "valid", sa: newServiceAccount()},
		{name: "dotted name", sa: newServiceAccount(func(sa *corev1.ServiceAccount) { sa.Name = "a.b" })},
		{name: "upper case name", sa: newServiceAccount(func(sa *corev1.ServiceAccount) { sa.Name = "Builder" }), wantField: "metadata.name"},
		{name: "no namespace", sa: newServiceAccount(func(sa *corev1.ServiceAccount) { sa.Namespace = "" }), wantField: "metadata.namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.sa)
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
	if errs := ValidateUpdate(newServiceAccount(func(sa *corev1.ServiceAccount) { sa.Name = "other" }), newServiceAccount()); len(errs) == 0 {
		t.Error("renaming: want an error")
	}
}
