package apiexports

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
)

// TestValidateV1alpha2 validates exports and bindings written in v1alpha2,
// as the API server does: converted into their stored form first.
func TestValidateV1alpha2(t *testing.T) {
	crd := apisv1alpha2.ResourceSchemaStorage{CRD: &apisv1alpha2.ResourceSchemaStorageCRD{}}
	export := func(resources []apisv1alpha2.ResourceSchema, verbs ...[]string) *apisv1alpha1.APIExport {
		e := &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Spec: apisv1alpha2.APIExportSpec{Resources: resources}}
		for _, v := range verbs {
			e.Spec.PermissionClaims = append(e.Spec.PermissionClaims, apisv1alpha2.PermissionClaim{Resource: "configmaps", Verbs: v})
		}
		var out apisv1alpha1.APIExport
		if err := apisv1alpha2.ConvertAPIExportToV1alpha1(e, &out); err != nil {
			t.Fatal(err)
		}
		return &out
	}
	binding := func(verbs []string, selector apisv1alpha2.PermissionClaimSelector, state apisv1alpha2.AcceptablePermissionClaimState) *apisv1alpha1.APIBinding {
		b := &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: apisv1alpha2.APIBindingSpec{
			Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Name: "e"}},
			PermissionClaims: []apisv1alpha2.AcceptablePermissionClaim{{
				ScopedPermissionClaim: apisv1alpha2.ScopedPermissionClaim{
					PermissionClaim: apisv1alpha2.PermissionClaim{Resource: "configmaps", Verbs: verbs},
					Selector:        selector,
				},
				State: state,
			}},
		}}
		var out apisv1alpha1.APIBinding
		if err := apisv1alpha2.ConvertAPIBindingToV1alpha1(b, &out); err != nil {
			t.Fatal(err)
		}
		return &out
	}
	all := apisv1alpha2.PermissionClaimSelector{MatchAll: true}
	labels := apisv1alpha2.PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}

	for _, tc := range []struct {
		name string
		errs func() []string
		want []string
	}{
		{"narrowed verbs", func() []string {
			return messages(validateV1alpha2(export(nil, []string{"get", "list"})))
		}, nil},
		{"unknown verb", func() []string {
			return messages(validateV1alpha2(export(nil, []string{"get", "escalate"})))
		}, []string{`spec.permissionClaims[0].verbs[1]: Unsupported value: "escalate"`}},
		{"no verb", func() []string {
			return messages(validateV1alpha2(export(nil, []string{})))
		}, []string{"spec.permissionClaims[0].verbs: Required value"}},
		{"resource of its schema", func() []string {
			return messages(validateV1alpha2(export([]apisv1alpha2.ResourceSchema{{Name: "cowboys", Group: "wildwest.dev", Schema: "v1.cowboys.wildwest.dev", Storage: crd}})))
		}, nil},
		{"resource of another name than its schema", func() []string {
			return messages(validateV1alpha2(export([]apisv1alpha2.ResourceSchema{{Name: "sheriffs", Group: "wildwest.dev", Schema: "v1.cowboys.wildwest.dev", Storage: crd}})))
		}, []string{"spec.resources[0]: Invalid value", "name and group must be those the schema"}},
		{"virtual storage", func() []string {
			return messages(validateV1alpha2(export([]apisv1alpha2.ResourceSchema{{Name: "cowboys", Group: "wildwest.dev", Schema: "v1.cowboys.wildwest.dev",
				Storage: apisv1alpha2.ResourceSchemaStorage{Virtual: &apisv1alpha2.ResourceSchemaStorageVirtual{IdentityHash: "h"}}}})))
		}, []string{"spec.resources[0].storage.virtual: Forbidden: virtual storage is not supported"}},
		{"answer with narrowed verbs", func() []string {
			return messages(ValidateBindingV1alpha2(binding([]string{"get"}, all, apisv1alpha2.ClaimAccepted)))
		}, nil},
		{"answer with an unknown verb", func() []string {
			return messages(ValidateBindingV1alpha2(binding([]string{"bind"}, all, apisv1alpha2.ClaimAccepted)))
		}, []string{`spec.permissionClaims[0].verbs[0]: Unsupported value: "bind"`}},
		{"accepted by label", func() []string {
			return messages(ValidateBindingV1alpha2(binding([]string{"*"}, labels, apisv1alpha2.ClaimAccepted)))
		}, []string{"spec.permissionClaims[0].selector: Forbidden: selecting claimed objects by label is not supported"}},
		{"rejected by label", func() []string {
			return messages(ValidateBindingV1alpha2(binding([]string{"*"}, labels, apisv1alpha2.ClaimRejected)))
		}, nil},
		{"matchAll and labels", func() []string {
			s := labels
			s.MatchAll = true
			return messages(ValidateBindingV1alpha2(binding([]string{"*"}, s, apisv1alpha2.ClaimRejected)))
		}, []string{"cannot be used with matchAll"}},
		{"no selector", func() []string {
			return messages(ValidateBindingV1alpha2(binding([]string{"*"}, apisv1alpha2.PermissionClaimSelector{}, apisv1alpha2.ClaimAccepted)))
		}, []string{"spec.permissionClaims[0].selector: Required value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.errs()
			if len(tc.want) == 0 {
				if len(got) != 0 {
					t.Fatalf("errors %q, want none", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("errors %q, want one with %q", got, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("error %q does not say %q", got[0], w)
				}
			}
		})
	}
}

// messages returns the messages of errs.
func messages(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
