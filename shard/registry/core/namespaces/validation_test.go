package namespaces

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func newNamespace(mutate ...func(*corev1.Namespace)) *corev1.Namespace {
	ns := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", ResourceVersion: "1"},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	for _, m := range mutate {
		m(ns)
	}
	return ns
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		ns        *corev1.Namespace
		wantField string
	}{
		{name: "valid", ns: newNamespace()},
		{name: "default", ns: newNamespace(func(ns *corev1.Namespace) { ns.Name = "default" })},
		{name: "qualified finalizer", ns: newNamespace(func(ns *corev1.Namespace) { ns.Spec.Finalizers = append(ns.Spec.Finalizers, "example.com/cleanup") })},
		{name: "no finalizers", ns: newNamespace(func(ns *corev1.Namespace) { ns.Spec.Finalizers = nil })},
		{name: "dotted name is not a DNS label", ns: newNamespace(func(ns *corev1.Namespace) { ns.Name = "a.b" }), wantField: "metadata.name"},
		{name: "upper case name", ns: newNamespace(func(ns *corev1.Namespace) { ns.Name = "Team" }), wantField: "metadata.name"},
		{name: "name too long", ns: newNamespace(func(ns *corev1.Namespace) {
			ns.Name = "a234567890123456789012345678901234567890123456789012345678901234"
		}), wantField: "metadata.name"},
		{name: "namespace set", ns: newNamespace(func(ns *corev1.Namespace) { ns.Namespace = "x" }), wantField: "metadata.namespace"},
		{name: "unqualified finalizer", ns: newNamespace(func(ns *corev1.Namespace) { ns.Spec.Finalizers = []corev1.FinalizerName{"cleanup"} }), wantField: "spec.finalizers"},
		{name: "bad finalizer", ns: newNamespace(func(ns *corev1.Namespace) { ns.Spec.Finalizers = []corev1.FinalizerName{"a/b/c"} }), wantField: "spec.finalizers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.ns)
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

func TestValidateUpdates(t *testing.T) {
	deletedAt := metav1.Now()
	deleting := func(ns *corev1.Namespace) { ns.DeletionTimestamp = &deletedAt }
	terminating := func(ns *corev1.Namespace) { ns.Status.Phase = corev1.NamespaceTerminating }
	tests := []struct {
		name      string
		validate  func(ns, old *corev1.Namespace) []string
		old, new  *corev1.Namespace
		wantField string
	}{
		{name: "update labels", validate: errorPaths(ValidateUpdate), old: newNamespace(), new: newNamespace(func(ns *corev1.Namespace) { ns.Labels = map[string]string{"a": "b"} })},
		{name: "rename", validate: errorPaths(ValidateUpdate), old: newNamespace(), new: newNamespace(func(ns *corev1.Namespace) { ns.Name = "other" }), wantField: "metadata.name"},
		{name: "status active", validate: errorPaths(ValidateStatusUpdate), old: newNamespace(), new: newNamespace()},
		{name: "status terminating without deletion", validate: errorPaths(ValidateStatusUpdate), old: newNamespace(), new: newNamespace(terminating), wantField: "status.phase"},
		{name: "status terminating while deleting", validate: errorPaths(ValidateStatusUpdate), old: newNamespace(deleting), new: newNamespace(deleting, terminating)},
		{name: "status active while deleting", validate: errorPaths(ValidateStatusUpdate), old: newNamespace(deleting), new: newNamespace(deleting), wantField: "status.phase"},
		{name: "finalize empties", validate: errorPaths(ValidateFinalizeUpdate), old: newNamespace(), new: newNamespace(func(ns *corev1.Namespace) { ns.Spec.Finalizers = nil })},
		{name: "finalize bad name", validate: errorPaths(ValidateFinalizeUpdate), old: newNamespace(), new: newNamespace(func(ns *corev1.Namespace) { ns.Spec.Finalizers = []corev1.FinalizerName{"x"} }), wantField: "spec.finalizers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.validate(tt.new, tt.old)
			if tt.wantField == "" {
				if len(got) != 0 {
					t.Fatalf("want valid, got errors on %v", got)
				}
				return
			}
			if len(got) == 0 || got[0] != tt.wantField {
				t.Fatalf("want first error on %q, got errors on %v", tt.wantField, got)
			}
		})
	}
}

// errorPaths adapts a validation function to return the paths of its errors.
func errorPaths(validate func(ns, old *corev1.Namespace) field.ErrorList) func(ns, old *corev1.Namespace) []string {
	return func(ns, old *corev1.Namespace) []string {
		var paths []string
		for _, err := range validate(ns, old) {
			paths = append(paths, err.Field)
		}
		return paths
	}
}
