package logicalcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func newLogicalCluster(mutate func(*corev1alpha1.LogicalCluster)) *corev1alpha1.LogicalCluster {
	lc := &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{Name: corev1alpha1.LogicalClusterName, ResourceVersion: "1"},
	}
	if mutate != nil {
		mutate(lc)
	}
	return lc
}

func withInitializers(initializers ...corev1alpha1.LogicalClusterInitializer) func(*corev1alpha1.LogicalCluster) {
	return func(lc *corev1alpha1.LogicalCluster) { lc.Spec.Initializers = initializers }
}

func owner() *corev1alpha1.LogicalClusterOwner {
	return &corev1alpha1.LogicalClusterOwner{APIVersion: "tenancy.kcp.io/v1alpha1", Resource: "workspaces", Name: "team", Cluster: "root", UID: "uid-1"}
}

// fieldsOf returns the field of each error of errs.
func fieldsOf(errs field.ErrorList) []string {
	var fields []string
	for _, err := range errs {
		fields = append(fields, err.Field)
	}
	return fields
}

func TestValidate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	tests := []struct {
		name       string
		lc         *corev1alpha1.LogicalCluster
		wantFields []string // empty: valid
	}{
		{name: "cluster", lc: newLogicalCluster(nil)},
		{name: "owner and initializers", lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			lc.Spec.Owner = owner()
			lc.Spec.Initializers = []corev1alpha1.LogicalClusterInitializer{"root:universal", "system:apibindings"}
		})},
		{name: "valid path annotation", lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			lc.Annotations = map[string]string{logicalcluster.PathAnnotationKey: "root:team"}
		})},
		{name: "name other than cluster", lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) { lc.Name = "other" }),
			wantFields: []string{"metadata.name"}},
		{name: "namespaced", lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) { lc.Namespace = "default" }),
			wantFields: []string{"metadata.namespace"}},
		{name: "invalid path annotation", lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			lc.Annotations = map[string]string{logicalcluster.PathAnnotationKey: "Not:A:Path!"}
		}), wantFields: []string{"metadata.annotations[" + logicalcluster.PathAnnotationKey + "]"}},
		{name: "owner without uid", lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			lc.Spec.Owner = owner()
			lc.Spec.Owner.UID = ""
		}), wantFields: []string{"spec.owner.uid"}},
		{name: "empty and duplicate initializers", lc: newLogicalCluster(withInitializers("a", "", "a")),
			wantFields: []string{"spec.initializers[1]", "spec.initializers[2]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := s.Validate(t.Context(), tt.lc)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	tests := []struct {
		name           string
		lc             *corev1alpha1.LogicalCluster
		wantStatus     corev1alpha1.LogicalClusterStatus
		wantFinalizers []string
	}{
		{
			name:           "no initializers: Ready",
			lc:             newLogicalCluster(nil),
			wantStatus:     corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady},
			wantFinalizers: []string{Finalizer},
		},
		{
			name: "initializers: Initializing with all of them",
			lc:   newLogicalCluster(withInitializers("a", "b")),
			wantStatus: corev1alpha1.LogicalClusterStatus{
				Phase:        corev1alpha1.LogicalClusterPhaseInitializing,
				Initializers: []corev1alpha1.LogicalClusterInitializer{"a", "b"},
			},
			wantFinalizers: []string{Finalizer},
		},
		{
			name: "status of the request is dropped, finalizer kept once",
			lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
				lc.Finalizers = []string{"example.com/x", Finalizer}
				lc.Status = corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseUnavailable, URL: "https://example.com"}
			}),
			wantStatus:     corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady},
			wantFinalizers: []string{"example.com/x", Finalizer},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.PrepareForCreate(t.Context(), tt.lc)
			if diff := cmp.Diff(tt.wantStatus, tt.lc.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFinalizers, tt.lc.Finalizers); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}

	// The status initializers are a copy: removing one leaves the spec alone.
	lc := newLogicalCluster(withInitializers("a", "b"))
	s.PrepareForCreate(t.Context(), lc)
	lc.Status.Initializers[0] = "changed"
	if lc.Spec.Initializers[0] != "a" {
		t.Errorf("spec initializers share storage with the status: %v", lc.Spec.Initializers)
	}
}

func TestUpdate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	initializing := func(lc *corev1alpha1.LogicalCluster) {
		lc.Spec.Initializers = []corev1alpha1.LogicalClusterInitializer{"a", "b"}
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
		lc.Status.Initializers = []corev1alpha1.LogicalClusterInitializer{"a", "b"}
	}
	withOwner := func(lc *corev1alpha1.LogicalCluster) { lc.Spec.Owner = owner() }

	t.Run("keeps the status", func(t *testing.T) {
		old := newLogicalCluster(initializing)
		lc := newLogicalCluster(initializing)
		lc.Status = corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady}
		lc.Labels = map[string]string{"a": "b"}
		s.PrepareForUpdate(t.Context(), lc, old)
		if diff := cmp.Diff(old.Status, lc.Status); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if lc.Labels["a"] != "b" {
			t.Errorf("labels %v, want the update's", lc.Labels)
		}
	})

	tests := []struct {
		name       string
		old, lc    *corev1alpha1.LogicalCluster
		wantFields []string
	}{
		{name: "labels change", old: newLogicalCluster(withOwner), lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			withOwner(lc)
			lc.Labels = map[string]string{"a": "b"}
		})},
		{name: "owner set", old: newLogicalCluster(nil), lc: newLogicalCluster(withOwner)},
		{name: "owner changed", old: newLogicalCluster(withOwner), lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			withOwner(lc)
			lc.Spec.Owner.Name = "other"
		}), wantFields: []string{"spec.owner"}},
		{name: "owner removed", old: newLogicalCluster(withOwner), lc: newLogicalCluster(nil), wantFields: []string{"spec.owner"}},
		{name: "initializer added", old: newLogicalCluster(withInitializers("a")), lc: newLogicalCluster(withInitializers("a", "b")),
			wantFields: []string{"spec.initializers"}},
		{name: "initializer removed", old: newLogicalCluster(withInitializers("a", "b")), lc: newLogicalCluster(withInitializers("a")),
			wantFields: []string{"spec.initializers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := s.ValidateUpdate(t.Context(), tt.lc, tt.old)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestStatusUpdate(t *testing.T) {
	status := statusStrategy{newStrategy(runtime.NewScheme())}
	initializing := func(initializers ...corev1alpha1.LogicalClusterInitializer) func(*corev1alpha1.LogicalCluster) {
		return func(lc *corev1alpha1.LogicalCluster) {
			lc.Spec.Initializers = []corev1alpha1.LogicalClusterInitializer{"a", "b"}
			lc.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
			lc.Status.Initializers = initializers
		}
	}

	tests := []struct {
		name       string
		old, lc    *corev1alpha1.LogicalCluster
		wantPhase  corev1alpha1.LogicalClusterPhaseType
		wantFields []string
	}{
		{name: "one initializer removed", old: newLogicalCluster(initializing("a", "b")), lc: newLogicalCluster(initializing("b")),
			wantPhase: corev1alpha1.LogicalClusterPhaseInitializing},
		{name: "last initializer removed: Ready", old: newLogicalCluster(initializing("b")), lc: newLogicalCluster(initializing()),
			wantPhase: corev1alpha1.LogicalClusterPhaseReady},
		{name: "initializer added", old: newLogicalCluster(initializing("a")), lc: newLogicalCluster(initializing("a", "c")),
			wantPhase: corev1alpha1.LogicalClusterPhaseInitializing, wantFields: []string{"status.initializers[1]"}},
		{name: "initializer replaced", old: newLogicalCluster(initializing("a")), lc: newLogicalCluster(initializing("c")),
			wantPhase: corev1alpha1.LogicalClusterPhaseInitializing, wantFields: []string{"status.initializers[0]"}},
		{name: "Ready with initializers left", old: newLogicalCluster(initializing("a")), lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			initializing("a")(lc)
			lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
		}), wantPhase: corev1alpha1.LogicalClusterPhaseReady, wantFields: []string{"status.phase"}},
		{name: "unknown phase", old: newLogicalCluster(nil), lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) { lc.Status.Phase = "Gone" }),
			wantPhase: "Gone", wantFields: []string{"status.phase"}},
		{name: "Unavailable", old: newLogicalCluster(nil), lc: newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			lc.Status.Phase = corev1alpha1.LogicalClusterPhaseUnavailable
		}), wantPhase: corev1alpha1.LogicalClusterPhaseUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status.PrepareForUpdate(t.Context(), tt.lc, tt.old)
			if tt.lc.Status.Phase != tt.wantPhase {
				t.Errorf("phase %q, want %q", tt.lc.Status.Phase, tt.wantPhase)
			}
			errs := status.ValidateUpdate(t.Context(), tt.lc, tt.old)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}

	t.Run("keeps spec, labels and annotations", func(t *testing.T) {
		old := newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			initializing("a")(lc)
			lc.Spec.Owner = owner()
			lc.Labels = map[string]string{"l": "old"}
			lc.Annotations = map[string]string{"a": "old"}
		})
		lc := newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
			lc.Spec.Initializers = []corev1alpha1.LogicalClusterInitializer{"x"}
			lc.Labels = map[string]string{"l": "new"}
			lc.Annotations = map[string]string{"a": "new"}
			lc.Status.URL = "https://shard/clusters/x"
		})
		status.PrepareForUpdate(t.Context(), lc, old)
		if diff := cmp.Diff(old.Spec, lc.Spec); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		if lc.Labels["l"] != "old" || lc.Annotations["a"] != "old" {
			t.Errorf("labels %v and annotations %v, want the stored ones", lc.Labels, lc.Annotations)
		}
		if lc.Status.URL != "https://shard/clusters/x" {
			t.Errorf("status URL %q, want the update's", lc.Status.URL)
		}
	})
}

// path returns the field path of names.
func path(names ...string) fieldpath.Path {
	elements := make([]interface{}, len(names))
	for i, n := range names {
		elements[i] = n
	}
	return fieldpath.MakePathOrDie(elements...)
}

func TestResetFields(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	version := "core.kcp.io/v1alpha1"
	if got := s.GetResetFields()[fieldpath.APIVersion(version)]; got == nil || !got.Has(path("status")) || got.Has(path("spec")) {
		t.Errorf("writes reset %v, want status", got)
	}
	got := statusStrategy{s}.GetResetFields()[fieldpath.APIVersion(version)]
	for _, p := range [][]string{{"spec"}, {"metadata", "labels"}, {"metadata", "annotations"}} {
		if got == nil || !got.Has(path(p...)) {
			t.Errorf("status writes reset %v, want %v among them", got, p)
		}
	}
	if got != nil && got.Has(path("status")) {
		t.Errorf("status writes reset the status: %v", got)
	}
}

func TestGetAttrs(t *testing.T) {
	lc := newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
		lc.Labels = map[string]string{"a": "b"}
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	})
	labels, fields, err := GetAttrs(lc)
	if err != nil {
		t.Fatal(err)
	}
	if labels["a"] != "b" || fields["metadata.name"] != "cluster" || fields["status.phase"] != "Ready" || len(fields) != 2 {
		t.Errorf("labels %v, fields %v", labels, fields)
	}
	if _, _, err := GetAttrs(&corev1alpha1.LogicalClusterList{}); err == nil {
		t.Error("attributes of a list: want an error")
	}
}

func TestInitializerLabels(t *testing.T) {
	ctx := t.Context()
	s := newStrategy(runtime.NewScheme())
	lc := newLogicalCluster(func(lc *corev1alpha1.LogicalCluster) {
		lc.Spec.Initializers = []corev1alpha1.LogicalClusterInitializer{"root:universal", "system:owner"}
		lc.Labels = map[string]string{corev1alpha1.InitializerLabelPrefix + "forged": "x", "app": "a"}
	})
	s.PrepareForCreate(ctx, lc)
	want := map[string]string{
		"app": "a",
		corev1alpha1.InitializerLabelKey("root:universal"): corev1alpha1.InitializerLabelValue("root:universal"),
		corev1alpha1.InitializerLabelKey("system:owner"):   corev1alpha1.InitializerLabelValue("system:owner"),
	}
	if diff := cmp.Diff(want, lc.Labels); diff != "" {
		t.Fatalf("labels after create (-want +got):\n%s", diff)
	}

	// A user update cannot drop the labels.
	upd := lc.DeepCopy()
	upd.Labels = map[string]string{"app": "b"}
	s.PrepareForUpdate(ctx, upd, lc)
	if len(upd.Labels) != 3 || upd.Labels["app"] != "b" {
		t.Fatalf("labels after update %v", upd.Labels)
	}

	// Removing an initializer in status removes its label, not the other's.
	st := lc.DeepCopy()
	st.Status.Initializers = []corev1alpha1.LogicalClusterInitializer{"system:owner"}
	statusStrategy{s}.PrepareForUpdate(ctx, st, lc)
	if _, ok := st.Labels[corev1alpha1.InitializerLabelKey("root:universal")]; ok {
		t.Errorf("label of a finished initializer left: %v", st.Labels)
	}
	if _, ok := st.Labels[corev1alpha1.InitializerLabelKey("system:owner")]; !ok {
		t.Errorf("label of a waiting initializer gone: %v", st.Labels)
	}
	if _, ok := lc.Labels[corev1alpha1.InitializerLabelKey("root:universal")]; !ok {
		t.Error("the old object was changed")
	}
}
