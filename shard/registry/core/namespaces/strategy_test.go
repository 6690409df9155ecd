package namespaces

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestSchemeDefaults(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	s.Default(ns)
	want := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{corev1.LabelMetadataName: "team-a"}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	if diff := cmp.Diff(want, ns); diff != "" {
		t.Errorf("defaulted namespace (-want +got):\n%s", diff)
	}

	generated := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "team-"}}
	s.Default(generated)
	if generated.Labels != nil {
		t.Errorf("namespace without name got labels %v", generated.Labels)
	}
	terminating := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	s.Default(terminating)
	if terminating.Status.Phase != corev1.NamespaceTerminating || terminating.Spec.Finalizers != nil {
		t.Errorf("defaulting changed a stored namespace: %+v", terminating)
	}

	for label, wantErr := range map[string]bool{"status.phase": false, "name": false, "metadata.name": false, "metadata.namespace": true, "spec.finalizers": true} {
		_, _, err := s.ConvertFieldLabel(corev1.SchemeGroupVersion.WithKind("Namespace"), label, "x")
		if (err != nil) != wantErr {
			t.Errorf("field label %s: error %v, want error %v", label, err, wantErr)
		}
	}
}

func TestStrategies(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme())

	created := &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a"},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/x"}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating},
	}
	strategy.PrepareForCreate(t.Context(), created)
	if diff := cmp.Diff([]corev1.FinalizerName{"example.com/x", corev1.FinalizerKubernetes}, created.Spec.Finalizers); diff != "" {
		t.Errorf("finalizers after create (-want +got):\n%s", diff)
	}
	if created.Status.Phase != corev1.NamespaceActive {
		t.Errorf("phase after create %q, want Active", created.Status.Phase)
	}
	again := created.DeepCopy()
	strategy.PrepareForCreate(t.Context(), again)
	if len(again.Spec.Finalizers) != 2 {
		t.Errorf("kubernetes finalizer added twice: %v", again.Spec.Finalizers)
	}

	generated := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-x1y2z"}}
	strategy.Canonicalize(generated)
	if generated.Labels[corev1.LabelMetadataName] != "team-x1y2z" {
		t.Errorf("canonical labels %v", generated.Labels)
	}

	old := newNamespace()
	update := newNamespace(func(ns *corev1.Namespace) {
		ns.Spec.Finalizers = nil
		ns.Status.Phase = corev1.NamespaceTerminating
		ns.Labels = map[string]string{"a": "b"}
	})
	strategy.PrepareForUpdate(t.Context(), update, old)
	if len(update.Spec.Finalizers) != 1 || update.Status.Phase != corev1.NamespaceActive || update.Labels["a"] != "b" {
		t.Errorf("main update kept %+v", update)
	}

	status := newNamespace(func(ns *corev1.Namespace) {
		ns.Spec.Finalizers = nil
		ns.Status.Phase = corev1.NamespaceTerminating
	})
	StatusStrategy{strategy}.PrepareForUpdate(t.Context(), status, old)
	if len(status.Spec.Finalizers) != 1 || status.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("status update kept %+v", status)
	}

	finalize := status.DeepCopy()
	finalize.Spec.Finalizers = nil
	FinalizeStrategy{strategy}.PrepareForUpdate(t.Context(), finalize, old)
	if len(finalize.Spec.Finalizers) != 0 || finalize.Status.Phase != corev1.NamespaceActive {
		t.Errorf("finalize update kept %+v", finalize)
	}

	if _, ok := strategy.GetResetFields()["v1"]; !ok {
		t.Error("no reset fields for v1")
	}
}

func TestGetAttrs(t *testing.T) {
	_, got, err := GetAttrs(newNamespace())
	if err != nil {
		t.Fatal(err)
	}
	want := fields.Set{"metadata.name": "team-a", "name": "team-a", "status.phase": "Active"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestGCFinalizers(t *testing.T) {
	orphan := metav1.DeletePropagationOrphan
	foreground := metav1.DeletePropagationForeground
	background := metav1.DeletePropagationBackground
	tests := []struct {
		name       string
		finalizers []string
		options    metav1.DeleteOptions
		want       []string
	}{
		{name: "no policy keeps", finalizers: []string{"a", metav1.FinalizerOrphanDependents}, want: []string{"a", metav1.FinalizerOrphanDependents}},
		{name: "orphan adds", finalizers: []string{"a"}, options: metav1.DeleteOptions{PropagationPolicy: &orphan}, want: []string{"a", metav1.FinalizerOrphanDependents}},
		{name: "foreground adds", options: metav1.DeleteOptions{PropagationPolicy: &foreground}, want: []string{metav1.FinalizerDeleteDependents}},
		{name: "background removes", finalizers: []string{metav1.FinalizerOrphanDependents, "a"}, options: metav1.DeleteOptions{PropagationPolicy: &background}, want: []string{"a"}},
		{name: "orphanDependents false", finalizers: []string{metav1.FinalizerOrphanDependents}, options: metav1.DeleteOptions{OrphanDependents: ptr.To(false)}, want: []string{metav1.FinalizerDeleteDependents}},
		{name: "already present once", finalizers: []string{metav1.FinalizerOrphanDependents}, options: metav1.DeleteOptions{PropagationPolicy: &orphan}, want: []string{metav1.FinalizerOrphanDependents}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := gcFinalizers(tt.finalizers, &tt.options)
			if diff := cmp.Diff(tt.want, got, cmpEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTableConvertor(t *testing.T) {
	ns := newNamespace(func(ns *corev1.Namespace) {
		ns.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * 24 * time.Hour))
		ns.Status.Phase = corev1.NamespaceTerminating
	})
	table, err := TableConvertor().ConvertToTable(t.Context(), &corev1.NamespaceList{Items: []corev1.Namespace{*ns}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Status", "Age"}, names); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interface{}{"team-a", "Terminating", "10d"}, table.Rows[0].Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}

// cmpEmpty treats nil and empty slices as equal.
func cmpEmpty() cmp.Option {
	return cmp.FilterValues(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())
}
