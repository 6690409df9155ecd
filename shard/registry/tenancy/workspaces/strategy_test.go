package workspaces

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
)

func newWorkspace(mutate func(*tenancyv1alpha1.Workspace)) *tenancyv1alpha1.Workspace {
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "team", ResourceVersion: "1"},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type: &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: "root"},
		},
	}
	if mutate != nil {
		mutate(ws)
	}
	return ws
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
		ws         *tenancyv1alpha1.Workspace
		wantFields []string // empty: valid
	}{
		{name: "typed", ws: newWorkspace(nil)},
		{name: "no type yet", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type = nil })},
		{name: "type without path", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type.Path = "" })},
		{name: "everything set", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
			ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}
			ws.Spec.Cluster = "2x8kvl0cmzhx"
			ws.Spec.URL = "https://proxy.example.com/clusters/2x8kvl0cmzhx"
		})},
		{name: "generated name", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Name, ws.GenerateName = "team-x7k2p", "team-" })},
		{name: "63 characters", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Name = strings.Repeat("a", 63) })},
		{name: "64 characters", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Name = strings.Repeat("a", 64) }),
			wantFields: []string{"metadata.name"}},
		{name: "upper case name", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Name = "Team" }),
			wantFields: []string{"metadata.name"}},
		{name: "dotted name", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Name = "a.b" }),
			wantFields: []string{"metadata.name"}},
		{name: "namespaced", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Namespace = "default" }),
			wantFields: []string{"metadata.namespace"}},
		{name: "type name starting with a digit", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type.Name = "1team" }),
			wantFields: []string{"spec.type.name"}},
		{name: "empty type name", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type.Name = "" }),
			wantFields: []string{"spec.type.name"}},
		{name: "invalid type path", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type.Path = "root::org" }),
			wantFields: []string{"spec.type.path"}},
		{name: "invalid selector", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
			ws.Spec.Location = &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near"}},
			}}
		}), wantFields: []string{"spec.location.selector.matchExpressions[0].operator"}},
		{name: "relative URL", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.URL = "/clusters/abc" }),
			wantFields: []string{"spec.URL"}},
		{name: "invalid cluster", ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Cluster = "Not A Cluster" }),
			wantFields: []string{"spec.cluster"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := s.Validate(t.Context(), tt.ws)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	ws := newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
		ws.Labels = map[string]string{tenancyv1alpha1.WorkspacePhaseLabel: "Ready", "app": "a"}
		ws.Status = tenancyv1alpha1.WorkspaceStatus{
			Phase:        corev1alpha1.LogicalClusterPhaseReady,
			Initializers: []corev1alpha1.LogicalClusterInitializer{"root:universal"},
		}
	})
	s.PrepareForCreate(t.Context(), ws)
	if diff := cmp.Diff(tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseScheduling}, ws.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{tenancyv1alpha1.WorkspacePhaseLabel: "Scheduling", "app": "a"}, ws.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
}

func TestUpdate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	ready := func(ws *tenancyv1alpha1.Workspace) {
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
		ws.Labels = map[string]string{tenancyv1alpha1.WorkspacePhaseLabel: "Ready"}
	}

	t.Run("keeps the status and its label", func(t *testing.T) {
		old := newWorkspace(ready)
		ws := newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
			ws.Status.Phase = corev1alpha1.LogicalClusterPhaseUnavailable
			ws.Labels = map[string]string{"a": "b"}
		})
		s.PrepareForUpdate(t.Context(), ws, old)
		if diff := cmp.Diff(old.Status, ws.Status); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"a": "b", tenancyv1alpha1.WorkspacePhaseLabel: "Ready"}, ws.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
	})

	withCluster := func(ws *tenancyv1alpha1.Workspace) {
		ws.Spec.Cluster = "abc"
		ws.Spec.URL = "https://proxy/clusters/abc"
	}
	tests := []struct {
		name       string
		old, ws    *tenancyv1alpha1.Workspace
		wantFields []string
	}{
		{name: "labels change", old: newWorkspace(nil), ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Labels = map[string]string{"a": "b"} })},
		{name: "type set once", old: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type = nil }), ws: newWorkspace(nil)},
		{name: "type changed", old: newWorkspace(nil), ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type.Name = "team" }),
			wantFields: []string{"spec.type"}},
		{name: "type path changed", old: newWorkspace(nil), ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type.Path = "root:org" }),
			wantFields: []string{"spec.type"}},
		{name: "type removed", old: newWorkspace(nil), ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) { ws.Spec.Type = nil }),
			wantFields: []string{"spec.type"}},
		{name: "cluster and URL set", old: newWorkspace(nil), ws: newWorkspace(withCluster)},
		{name: "cluster and URL kept", old: newWorkspace(withCluster), ws: newWorkspace(withCluster)},
		{name: "cluster changed", old: newWorkspace(withCluster), ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
			withCluster(ws)
			ws.Spec.Cluster = "def"
		}), wantFields: []string{"spec.cluster"}},
		{name: "cluster and URL removed", old: newWorkspace(withCluster), ws: newWorkspace(nil),
			wantFields: []string{"spec.cluster", "spec.URL"}},
		{name: "URL changed", old: newWorkspace(withCluster), ws: newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
			withCluster(ws)
			ws.Spec.URL = "https://other/clusters/abc"
		}), wantFields: []string{"spec.URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := s.ValidateUpdate(t.Context(), tt.ws, tt.old)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestStatusUpdate(t *testing.T) {
	status := statusStrategy{newStrategy(runtime.NewScheme())}
	phase := func(p corev1alpha1.LogicalClusterPhaseType) func(*tenancyv1alpha1.Workspace) {
		return func(ws *tenancyv1alpha1.Workspace) { ws.Status.Phase = p }
	}

	tests := []struct {
		name       string
		phase      corev1alpha1.LogicalClusterPhaseType
		wantFields []string
	}{
		{name: "Initializing", phase: corev1alpha1.LogicalClusterPhaseInitializing},
		{name: "Ready", phase: corev1alpha1.LogicalClusterPhaseReady},
		{name: "Unavailable", phase: corev1alpha1.LogicalClusterPhaseUnavailable},
		{name: "Deleting", phase: PhaseDeleting},
		{name: "unknown", phase: "Gone", wantFields: []string{"status.phase"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := newWorkspace(phase(corev1alpha1.LogicalClusterPhaseScheduling))
			status.PrepareForUpdate(t.Context(), old, old.DeepCopy())
			ws := newWorkspace(phase(tt.phase))
			status.PrepareForUpdate(t.Context(), ws, old)
			if got := ws.Labels[tenancyv1alpha1.WorkspacePhaseLabel]; got != string(tt.phase) {
				t.Errorf("phase label %q, want %q", got, tt.phase)
			}
			if got := old.Labels[tenancyv1alpha1.WorkspacePhaseLabel]; got != "Scheduling" {
				t.Errorf("the old object's phase label changed to %q", got)
			}
			errs := status.ValidateUpdate(t.Context(), ws, old)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}

	t.Run("keeps spec, labels and annotations", func(t *testing.T) {
		old := newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
			ws.Spec.Cluster = "abc"
			ws.Labels = map[string]string{"l": "old", tenancyv1alpha1.WorkspacePhaseLabel: "Scheduling"}
			ws.Annotations = map[string]string{"a": "old"}
			ws.Status.Phase = corev1alpha1.LogicalClusterPhaseScheduling
		})
		ws := newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
			ws.Spec.Type.Name = "team"
			ws.Labels = map[string]string{"l": "new"}
			ws.Annotations = map[string]string{"a": "new"}
			ws.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
		})
		status.PrepareForUpdate(t.Context(), ws, old)
		if diff := cmp.Diff(old.Spec, ws.Spec); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"l": "old", tenancyv1alpha1.WorkspacePhaseLabel: "Initializing"}, ws.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
		if ws.Annotations["a"] != "old" {
			t.Errorf("annotations %v, want the stored ones", ws.Annotations)
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
	version := fieldpath.APIVersion("tenancy.kcp.io/v1alpha1")
	if got := s.GetResetFields()[version]; got == nil || !got.Has(path("status")) || got.Has(path("spec")) {
		t.Errorf("writes reset %v, want status", got)
	}
	got := statusStrategy{s}.GetResetFields()[version]
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
	ws := newWorkspace(func(ws *tenancyv1alpha1.Workspace) {
		ws.Labels = map[string]string{"a": "b"}
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	})
	labels, fs, err := GetAttrs(ws)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fields.Set{"metadata.name": "team", "status.phase": "Ready"}, fs); diff != "" || labels["a"] != "b" {
		t.Errorf("labels %v, fields (-want +got):\n%s", labels, diff)
	}
	if _, _, err := GetAttrs(&tenancyv1alpha1.WorkspaceList{}); err == nil {
		t.Error("attributes of a list: want an error")
	}
}

func TestFieldLabels(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddFieldLabelConversions(s); err != nil {
		t.Fatal(err)
	}
	gvk := tenancyv1alpha1.SchemeGroupVersion.WithKind("Workspace")
	for _, label := range []string{"metadata.name", "status.phase"} {
		if l, v, err := s.ConvertFieldLabel(gvk, label, "x"); err != nil || l != label || v != "x" {
			t.Errorf("field label %s: %q %q %v", label, l, v, err)
		}
	}
	if _, _, err := s.ConvertFieldLabel(gvk, "spec.cluster", "x"); err == nil {
		t.Error("field label spec.cluster: want an error")
	}
}
