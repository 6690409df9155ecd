package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func namespaceParts(ns *corev1.Namespace) (*metav1.ObjectMeta, *corev1.NamespaceSpec, *corev1.NamespaceStatus) {
	return &ns.ObjectMeta, &ns.Spec, &ns.Status
}

func TestWithStatus(t *testing.T) {
	ctx := t.Context()
	valid := func(*corev1.Namespace) field.ErrorList { return nil }
	s := NewWithStatus(NewStrategy(runtime.NewScheme(), ClusterScoped, valid, func(_, _ *corev1.Namespace) field.ErrorList { return nil }), corev1.SchemeGroupVersion, namespaceParts)
	stored := func() *corev1.Namespace {
		return &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 3, Labels: map[string]string{"l": "old"}},
			Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive, Conditions: []corev1.NamespaceCondition{{Type: "A"}}},
		}
	}

	created := stored()
	s.PrepareForCreate(ctx, created)
	if created.Status.Phase != "" || created.Generation != 1 || len(created.Spec.Finalizers) != 1 {
		t.Errorf("created %+v, want no status, generation 1 and the spec", created)
	}

	for _, tc := range []struct {
		name           string
		change         func(*corev1.Namespace)
		wantGeneration int64
	}{
		{name: "labels", change: func(ns *corev1.Namespace) { ns.Labels = map[string]string{"l": "new"} }, wantGeneration: 3},
		{name: "spec", change: func(ns *corev1.Namespace) { ns.Spec.Finalizers = nil }, wantGeneration: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, ns := stored(), stored()
			tc.change(ns)
			ns.Status.Phase = corev1.NamespaceTerminating
			s.PrepareForUpdate(ctx, ns, old)
			if ns.Status.Phase != corev1.NamespaceActive || ns.Generation != tc.wantGeneration {
				t.Errorf("phase %q and generation %d, want Active and %d", ns.Status.Phase, ns.Generation, tc.wantGeneration)
			}
			// The status is a copy: changing it leaves the stored one alone.
			ns.Status.Conditions[0].Type = "B"
			if old.Status.Conditions[0].Type != "A" {
				t.Error("the stored status changed")
			}
		})
	}

	t.Run("status", func(t *testing.T) {
		old, ns := stored(), stored()
		managed := []metav1.ManagedFieldsEntry{{Manager: "m", Subresource: "status"}}
		ns.Labels, ns.ManagedFields, ns.Spec.Finalizers = map[string]string{"l": "new"}, managed, nil
		ns.Status.Phase = corev1.NamespaceTerminating
		s.PrepareForStatusUpdate(ctx, ns, old)
		want := stored()
		want.ManagedFields = managed
		want.Status.Phase = corev1.NamespaceTerminating
		if diff := cmp.Diff(want, ns); diff != "" {
			t.Errorf("object (-want +got):\n%s", diff)
		}
	})

	if got := s.GetResetFields()["v1"]; got == nil || !got.Equals(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))) {
		t.Errorf("writes reset %v, want status", got)
	}
	if got := s.StatusResetFields()["v1"]; got == nil || !got.Equals(fieldpath.NewSet(fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("metadata"))) {
		t.Errorf("status writes reset %v, want spec and metadata", got)
	}
}
