package workspacetypes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

func newType(mutate func(*tenancyv1alpha1.WorkspaceType)) *tenancyv1alpha1.WorkspaceType {
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "team", ResourceVersion: "1"}}
	if mutate != nil {
		mutate(wt)
	}
	return wt
}

func ref(path, name string) tenancyv1alpha1.WorkspaceTypeReference {
	return tenancyv1alpha1.WorkspaceTypeReference{Path: path, Name: tenancyv1alpha1.WorkspaceTypeName(name)}
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
		wt         *tenancyv1alpha1.WorkspaceType
		wantFields []string // empty: valid
	}{
		{name: "empty spec", wt: newType(nil)},
		{name: "everything set", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec = tenancyv1alpha1.WorkspaceTypeSpec{
				Initializer:               true,
				Extend:                    tenancyv1alpha1.WorkspaceTypeExtension{With: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "universal")}},
				AdditionalWorkspaceLabels: map[string]string{"example.com/kind": "team"},
				DefaultChildWorkspaceType: &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal"},
				LimitAllowedChildren:      &tenancyv1alpha1.WorkspaceTypeSelector{Types: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "universal")}},
				LimitAllowedParents:       &tenancyv1alpha1.WorkspaceTypeSelector{None: true},
				DefaultAPIBindings:        []tenancyv1alpha1.APIExportReference{{Path: "root:compute", Export: "kubernetes"}, {Export: "local"}},
			}
		})},
		{name: "name with a leading digit", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) { wt.Name = "1team" }),
			wantFields: []string{"metadata.name"}},
		{name: "name with a dot", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) { wt.Name = "a.b" }),
			wantFields: []string{"metadata.name"}},
		{name: "reserved name", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) { wt.Name = "system" }),
			wantFields: []string{"metadata.name"}},
		{name: "namespaced", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) { wt.Namespace = "default" }),
			wantFields: []string{"metadata.namespace"}},
		{name: "invalid extended types", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec.Extend.With = []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "Team"), ref("root:", "team"), ref("root", "")}
		}), wantFields: []string{"spec.extend.with[0].name", "spec.extend.with[1].path", "spec.extend.with[2].name"}},
		{name: "invalid default child type", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec.DefaultChildWorkspaceType = &tenancyv1alpha1.WorkspaceTypeReference{Name: "a_b"}
		}), wantFields: []string{"spec.defaultChildWorkspaceType.name"}},
		{name: "none and types", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec.LimitAllowedChildren = &tenancyv1alpha1.WorkspaceTypeSelector{None: true, Types: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "team")}}
			wt.Spec.LimitAllowedParents = &tenancyv1alpha1.WorkspaceTypeSelector{None: true, Types: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "team")}}
		}), wantFields: []string{"spec.limitAllowedChildren.types", "spec.limitAllowedParents.types"}},
		{name: "neither none nor types", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec.LimitAllowedParents = &tenancyv1alpha1.WorkspaceTypeSelector{}
		}), wantFields: []string{"spec.limitAllowedParents"}},
		{name: "invalid allowed types", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec.LimitAllowedChildren = &tenancyv1alpha1.WorkspaceTypeSelector{Types: []tenancyv1alpha1.WorkspaceTypeReference{ref("Root", "team")}}
			wt.Spec.LimitAllowedParents = &tenancyv1alpha1.WorkspaceTypeSelector{Types: []tenancyv1alpha1.WorkspaceTypeReference{ref("root", "-")}}
		}), wantFields: []string{"spec.limitAllowedChildren.types[0].path", "spec.limitAllowedParents.types[0].name"}},
		{name: "binding without export", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec.DefaultAPIBindings = []tenancyv1alpha1.APIExportReference{{Export: "ok"}, {Path: "root"}, {Path: "no path", Export: "x"}}
		}), wantFields: []string{"spec.defaultAPIBindings[1].export", "spec.defaultAPIBindings[2].path"}},
		{name: "invalid label", wt: newType(func(wt *tenancyv1alpha1.WorkspaceType) {
			wt.Spec.AdditionalWorkspaceLabels = map[string]string{"a b": "c"}
		}), wantFields: []string{"spec.additionalWorkspaceLabels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := s.Validate(t.Context(), tt.wt)
			if diff := cmp.Diff(tt.wantFields, fieldsOf(errs)); diff != "" {
				t.Errorf("error fields (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}

	// Updates validate the new spec the same way.
	old := newType(nil)
	wt := newType(func(wt *tenancyv1alpha1.WorkspaceType) {
		wt.Spec.LimitAllowedChildren = &tenancyv1alpha1.WorkspaceTypeSelector{}
	})
	if diff := cmp.Diff([]string{"spec.limitAllowedChildren"}, fieldsOf(s.ValidateUpdate(t.Context(), wt, old))); diff != "" {
		t.Errorf("update error fields (-want +got):\n%s", diff)
	}
}

func TestValidateName(t *testing.T) {
	for name, valid := range map[string]bool{"team": true, "a": true, "my-type2": true, "any": false, "2fa": false, "a-": false, "": false} {
		if got := len(ValidateName(name, false)) == 0; got != valid {
			t.Errorf("ValidateName(%q) valid %v, want %v", name, got, valid)
		}
	}
	if errs := ValidateName("team-", true); len(errs) != 0 {
		t.Errorf("generateName prefix team-: %v", errs)
	}
}

func TestStatus(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	ready := tenancyv1alpha1.WorkspaceTypeStatus{
		Conditions:        conditionsv1alpha1.Conditions{{Type: tenancyv1alpha1.WorkspaceTypeReady, Status: "True"}},
		VirtualWorkspaces: []tenancyv1alpha1.VirtualWorkspace{{URL: "https://shard/services/initializingworkspaces/root:team"}},
	}

	created := newType(func(wt *tenancyv1alpha1.WorkspaceType) { wt.Status = ready })
	s.PrepareForCreate(t.Context(), created)
	if diff := cmp.Diff(tenancyv1alpha1.WorkspaceTypeStatus{}, created.Status); diff != "" {
		t.Errorf("status after create (-want +got):\n%s", diff)
	}

	old := newType(func(wt *tenancyv1alpha1.WorkspaceType) { wt.Status = ready })
	updated := newType(func(wt *tenancyv1alpha1.WorkspaceType) { wt.Spec.Initializer = true })
	s.PrepareForUpdate(t.Context(), updated, old)
	if diff := cmp.Diff(ready, updated.Status); diff != "" || !updated.Spec.Initializer {
		t.Errorf("update: initializer %v, status (-want +got):\n%s", updated.Spec.Initializer, diff)
	}

	status := statusStrategy{s}
	old = newType(func(wt *tenancyv1alpha1.WorkspaceType) {
		wt.Spec.Initializer = true
		wt.Labels = map[string]string{"l": "old"}
	})
	st := newType(func(wt *tenancyv1alpha1.WorkspaceType) {
		wt.Labels = map[string]string{"l": "new"}
		wt.Status = ready
	})
	status.PrepareForUpdate(t.Context(), st, old)
	if !st.Spec.Initializer || st.Labels["l"] != "old" {
		t.Errorf("status update changed spec %+v or labels %v", st.Spec, st.Labels)
	}
	if diff := cmp.Diff(ready, st.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if errs := status.ValidateUpdate(t.Context(), st, old); len(errs) != 0 {
		t.Errorf("valid status: %v", errs)
	}
	st.Status.VirtualWorkspaces = append(st.Status.VirtualWorkspaces, ready.VirtualWorkspaces[0], tenancyv1alpha1.VirtualWorkspace{})
	if diff := cmp.Diff([]string{"status.virtualWorkspaces[1].url", "status.virtualWorkspaces[2].url"}, fieldsOf(status.ValidateUpdate(t.Context(), st, old))); diff != "" {
		t.Errorf("status error fields (-want +got):\n%s", diff)
	}
}
