package apibindings

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

// hash is an identity hash.
const hash = "4f7a7b9e1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f"

// cowboys is a binding to the export today-cowboys in root:west that
// accepts its claim of configmaps.
func cowboys(change ...func(*apisv1alpha1.APIBinding)) *apisv1alpha1.APIBinding {
	b := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboys", ResourceVersion: "1"},
		Spec: apisv1alpha1.APIBindingSpec{
			Reference: apisv1alpha1.BindingReference{Export: &apisv1alpha1.ExportBindingReference{Path: "root:west", Name: "today-cowboys"}},
			PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{
				{PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true}, State: apisv1alpha1.ClaimAccepted},
			},
		},
	}
	for _, c := range change {
		c(b)
	}
	return b
}

// workspaceForm gives a binding the older form of the reference, alone.
func workspaceForm(path, exportName string) func(*apisv1alpha1.APIBinding) {
	return func(b *apisv1alpha1.APIBinding) {
		b.Spec.Reference = apisv1alpha1.BindingReference{Workspace: &apisv1alpha1.WorkspaceExportReference{Path: path, ExportName: exportName}}
	}
}

// answer returns the answer state to a claim of all resource.group objects.
func answer(group, resource, identityHash string, state apisv1alpha1.AcceptablePermissionClaimState) apisv1alpha1.AcceptablePermissionClaim {
	return apisv1alpha1.AcceptablePermissionClaim{
		PermissionClaim: apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Group: group, Resource: resource}, All: true, IdentityHash: identityHash},
		State:           state,
	}
}

// withAnswers sets the answers of a binding.
func withAnswers(answers ...apisv1alpha1.AcceptablePermissionClaim) func(*apisv1alpha1.APIBinding) {
	return func(b *apisv1alpha1.APIBinding) { b.Spec.PermissionClaims = answers }
}

// TestCreate prepares and validates new bindings, as the API server does.
func TestCreate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	for _, tc := range []struct {
		name    string
		binding *apisv1alpha1.APIBinding
		want    []string // "<type> <field>"; none for a valid binding
		detail  string
		export  *apisv1alpha1.ExportBindingReference // the reference stored
	}{
		{name: "by path", binding: cowboys(), export: &apisv1alpha1.ExportBindingReference{Path: "root:west", Name: "today-cowboys"}},
		{name: "local", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference.Export.Path = "" })},
		{name: "no claims", binding: cowboys(withAnswers())},
		{name: "the older form", binding: cowboys(workspaceForm("root:west", "today-cowboys")),
			export: &apisv1alpha1.ExportBindingReference{Path: "root:west", Name: "today-cowboys"}},
		{name: "the older form, local", binding: cowboys(workspaceForm("", "today-cowboys")),
			export: &apisv1alpha1.ExportBindingReference{Name: "today-cowboys"}},
		{name: "both forms of one export", binding: cowboys(func(b *apisv1alpha1.APIBinding) {
			b.Spec.Reference.Workspace = &apisv1alpha1.WorkspaceExportReference{Path: "root:west", ExportName: "today-cowboys"}
		}), export: &apisv1alpha1.ExportBindingReference{Path: "root:west", Name: "today-cowboys"}},
		{name: "both forms of two exports", binding: cowboys(func(b *apisv1alpha1.APIBinding) {
			b.Spec.Reference.Workspace = &apisv1alpha1.WorkspaceExportReference{Path: "root:east", ExportName: "today-cowboys"}
		}), want: []string{"FieldValueInvalid spec.reference.workspace"}, detail: `"root:east"`},
		{name: "no reference", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference = apisv1alpha1.BindingReference{} }),
			want: []string{"FieldValueRequired spec.reference.export"}},
		{name: "no export name", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference.Export.Name = "" }),
			want: []string{"FieldValueRequired spec.reference.export.name"}},
		{name: "no export name in the older form", binding: cowboys(workspaceForm("root:west", "")),
			want: []string{"FieldValueRequired spec.reference.export.name"}},
		{name: "an export name that is no DNS subdomain", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference.Export.Name = "Today" }),
			want: []string{"FieldValueInvalid spec.reference.export.name"}},
		{name: "a bad path", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference.Export.Path = "root:West" }),
			want: []string{"FieldValueInvalid spec.reference.export.path"}},
		{name: "a bad path in the older form", binding: cowboys(workspaceForm("root::west", "today-cowboys")),
			want: []string{"FieldValueInvalid spec.reference.export.path"}},
		{name: "a name that is not a DNS subdomain", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Name = "Cowboys" }),
			want: []string{"FieldValueInvalid metadata.name"}},

		{name: "answers", binding: cowboys(withAnswers(
			answer("", "secrets", "", apisv1alpha1.ClaimRejected),
			answer("wildwest.dev", "horses", hash, apisv1alpha1.ClaimAccepted),
		))},
		{name: "an answer to a custom resource without identity hash", binding: cowboys(withAnswers(answer("wildwest.dev", "horses", "", apisv1alpha1.ClaimAccepted)))},
		{name: "no answer", binding: cowboys(withAnswers(answer("", "secrets", "", ""))),
			want: []string{"FieldValueNotSupported spec.permissionClaims[0].state"}},
		{name: "an unknown answer", binding: cowboys(withAnswers(answer("", "secrets", "", "Maybe"))),
			want: []string{"FieldValueNotSupported spec.permissionClaims[0].state"}, detail: `"Accepted", "Rejected"`},
		{name: "two answers to one claim", binding: cowboys(withAnswers(
			answer("", "secrets", "", apisv1alpha1.ClaimRejected),
			answer("", "secrets", "", apisv1alpha1.ClaimAccepted),
		)), want: []string{"FieldValueDuplicate spec.permissionClaims[1]"}},
		{name: "a claim without resource", binding: cowboys(withAnswers(answer("", "", "", apisv1alpha1.ClaimAccepted))),
			want: []string{"FieldValueRequired spec.permissionClaims[0].resource"}},
		{name: "a claim with a bad identity hash", binding: cowboys(withAnswers(answer("wildwest.dev", "horses", "xyz", apisv1alpha1.ClaimAccepted))),
			want: []string{"FieldValueInvalid spec.permissionClaims[0].identityHash"}},
		{name: "a claim of nothing", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.PermissionClaims[0].All = false }),
			want: []string{"FieldValueInvalid spec.permissionClaims[0]"}, detail: `either "all" or "resourceSelector" must be set`},
		{name: "a claim with an empty selector", binding: cowboys(func(b *apisv1alpha1.APIBinding) {
			b.Spec.PermissionClaims[0].All = false
			b.Spec.PermissionClaims[0].ResourceSelector = []apisv1alpha1.ResourceSelector{{}}
		}), want: []string{"FieldValueInvalid spec.permissionClaims[0].resourceSelector[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.binding.DeepCopy()
			s.PrepareForCreate(t.Context(), b)
			errs := s.Validate(t.Context(), b)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.detail != "" && !strings.Contains(errs.ToAggregate().Error(), tc.detail) {
				t.Errorf("errors %v do not say %q", errs, tc.detail)
			}
			if tc.export != nil {
				want := apisv1alpha1.BindingReference{Export: tc.export}
				if diff := cmp.Diff(want, b.Spec.Reference); diff != "" {
					t.Errorf("reference (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	b := cowboys(func(b *apisv1alpha1.APIBinding) {
		b.Generation = 5
		b.Status = apisv1alpha1.APIBindingStatus{Phase: apisv1alpha1.APIBindingPhaseBound, APIExportClusterName: "abc"}
	})
	s.PrepareForCreate(t.Context(), b)
	if diff := cmp.Diff(apisv1alpha1.APIBindingStatus{}, b.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if b.Generation != 1 {
		t.Errorf("generation %d, want 1", b.Generation)
	}
}

// TestUpdate prepares and validates updates, as the API server does.
func TestUpdate(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	stored := func(b *apisv1alpha1.APIBinding) {
		b.Generation = 2
		b.Status.Phase = apisv1alpha1.APIBindingPhaseBound
		b.Status.APIExportClusterName = "2x8kvl0cmzhx"
		conditionsv1alpha1.MarkTrue(b, conditionsv1alpha1.ReadyCondition)
	}
	for _, tc := range []struct {
		name           string
		binding        *apisv1alpha1.APIBinding
		want           []string
		detail         string
		wantGeneration int64
	}{
		{name: "a label", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Labels = map[string]string{"a": "b"} }), wantGeneration: 2},
		{name: "another answer", binding: cowboys(withAnswers(answer("", "configmaps", "", apisv1alpha1.ClaimRejected))), wantGeneration: 3},
		{name: "the same export in the older form", binding: cowboys(workspaceForm("root:west", "today-cowboys")), wantGeneration: 2},
		{name: "another export", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference.Export.Name = "yesterday-cowboys" }),
			want: []string{"FieldValueInvalid spec.reference"}, detail: "APIExport reference must not be changed", wantGeneration: 3},
		{name: "another path", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference.Export.Path = "root:east" }),
			want: []string{"FieldValueInvalid spec.reference"}, wantGeneration: 3},
		{name: "another export in the older form", binding: cowboys(workspaceForm("root:east", "today-cowboys")),
			want: []string{"FieldValueInvalid spec.reference"}, wantGeneration: 3},
		{name: "no export", binding: cowboys(func(b *apisv1alpha1.APIBinding) { b.Spec.Reference.Export = nil }),
			want: []string{"FieldValueRequired spec.reference.export", "FieldValueInvalid spec.reference"}, wantGeneration: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cowboys(stored)
			b := tc.binding.DeepCopy()
			b.Generation = old.Generation // as rest.BeforeUpdate sets it
			b.Status = apisv1alpha1.APIBindingStatus{Phase: apisv1alpha1.APIBindingPhaseBinding}
			s.PrepareForUpdate(t.Context(), b, old)
			if diff := cmp.Diff(old.Status, b.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if b.Generation != tc.wantGeneration {
				t.Errorf("generation %d, want %d", b.Generation, tc.wantGeneration)
			}
			errs := s.ValidateUpdate(t.Context(), b, old)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.detail != "" && !strings.Contains(errs.ToAggregate().Error(), tc.detail) {
				t.Errorf("errors %v do not say %q", errs, tc.detail)
			}
		})
	}
}

func TestStatusUpdate(t *testing.T) {
	status := statusStrategy{newStrategy(runtime.NewScheme())}

	t.Run("keeps spec and metadata", func(t *testing.T) {
		old := cowboys(func(b *apisv1alpha1.APIBinding) {
			b.Generation = 2
			b.Labels = map[string]string{"l": "old"}
			b.Annotations = map[string]string{"a": "old"}
		})
		managed := []metav1.ManagedFieldsEntry{{Manager: "apibinding-controller", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apis.kcp.io/v1alpha1", Subresource: "status"}}
		b := cowboys(workspaceForm("root:east", "other"), func(b *apisv1alpha1.APIBinding) {
			b.Generation = 2
			b.Labels = map[string]string{"l": "new"}
			b.Finalizers = []string{"apis.kcp.io/new"}
			b.ManagedFields = managed
			b.Status.Phase = apisv1alpha1.APIBindingPhaseBinding
		})
		status.PrepareForUpdate(t.Context(), b, old)
		if diff := cmp.Diff(old.Spec, b.Spec); diff != "" {
			t.Errorf("spec (-want +got):\n%s", diff)
		}
		want := old.ObjectMeta.DeepCopy()
		want.ManagedFields = managed
		if diff := cmp.Diff(*want, b.ObjectMeta); diff != "" {
			t.Errorf("metadata (-want +got):\n%s", diff)
		}
		if b.Status.Phase != apisv1alpha1.APIBindingPhaseBinding {
			t.Errorf("phase %q, want the new one", b.Status.Phase)
		}
		if errs := status.ValidateUpdate(t.Context(), b, old); len(errs) > 0 {
			t.Errorf("setting the phase: %v", errs)
		}
	})

	phase := func(p apisv1alpha1.APIBindingPhaseType) func(*apisv1alpha1.APIBinding) {
		return func(b *apisv1alpha1.APIBinding) { b.Status.Phase = p }
	}
	bound := func(resources ...apisv1alpha1.BoundAPIResource) func(*apisv1alpha1.APIBinding) {
		return func(b *apisv1alpha1.APIBinding) { b.Status.BoundResources = resources }
	}
	horses := apisv1alpha1.BoundAPIResource{Group: "wildwest.dev", Resource: "horses", Schema: apisv1alpha1.BoundAPIResourceSchema{Name: "v1.horses.wildwest.dev", UID: "u1", IdentityHash: hash}}
	for _, tc := range []struct {
		name   string
		old, b *apisv1alpha1.APIBinding
		want   []string
		detail string
	}{
		{name: "Binding", old: cowboys(), b: cowboys(phase(apisv1alpha1.APIBindingPhaseBinding))},
		{name: "Bound", old: cowboys(phase(apisv1alpha1.APIBindingPhaseBinding)), b: cowboys(phase(apisv1alpha1.APIBindingPhaseBound), bound(horses))},
		{name: "back to Binding", old: cowboys(phase(apisv1alpha1.APIBindingPhaseBound)), b: cowboys(phase(apisv1alpha1.APIBindingPhaseBinding))},
		{name: "no phase again", old: cowboys(phase(apisv1alpha1.APIBindingPhaseBinding)), b: cowboys(),
			want: []string{"FieldValueForbidden status.phase"}, detail: `cannot transition from "Binding" to ""`},
		{name: "an unknown phase", old: cowboys(), b: cowboys(phase("Unbound")),
			want: []string{"FieldValueNotSupported status.phase"}},
		{name: "a resource bound twice", old: cowboys(), b: cowboys(bound(horses, horses)),
			want: []string{"FieldValueDuplicate status.boundResources[1]"}},
		{name: "a bound resource without schema", old: cowboys(), b: cowboys(bound(apisv1alpha1.BoundAPIResource{Group: "wildwest.dev", Resource: "horses"})),
			want: []string{"FieldValueRequired status.boundResources[0].schema.name", "FieldValueRequired status.boundResources[0].schema.UID", "FieldValueRequired status.boundResources[0].schema.identityHash"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status.PrepareForUpdate(t.Context(), tc.b, tc.old)
			errs := status.ValidateUpdate(t.Context(), tc.b, tc.old)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Fatalf("errors (-want +got):\n%s\n%v", diff, errs)
			}
			if tc.detail != "" && !strings.Contains(errs.ToAggregate().Error(), tc.detail) {
				t.Errorf("errors %v do not say %q", errs, tc.detail)
			}
		})
	}
}

func TestResetFields(t *testing.T) {
	s := newStrategy(runtime.NewScheme())
	storetest.CheckStatusResetFields(t, "apis.kcp.io/v1alpha1", s, statusStrategy{s})
}
