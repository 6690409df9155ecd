package apibinding

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
)

func TestSetStatusClaimAnnotations(t *testing.T) {
	configmaps := apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true}
	secrets := apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, All: true}
	export := &apisv1alpha1.APIExport{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			apisv1alpha2.PermissionClaimsAnnotation: `[{"resource":"configmaps","verbs":["get","list"]}]`,
		}},
		Spec: apisv1alpha1.APIExportSpec{PermissionClaims: []apisv1alpha1.PermissionClaim{configmaps, secrets}},
	}
	binding := func(answers string) *apisv1alpha1.APIBinding {
		b := &apisv1alpha1.APIBinding{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"team": "x"}},
			Spec: apisv1alpha1.APIBindingSpec{PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{
				{PermissionClaim: configmaps, State: apisv1alpha1.ClaimAccepted},
				{PermissionClaim: secrets, State: apisv1alpha1.ClaimAccepted},
			}},
			Status: apisv1alpha1.APIBindingStatus{
				ExportPermissionClaims:  export.Spec.PermissionClaims,
				AppliedPermissionClaims: []apisv1alpha1.PermissionClaim{configmaps, secrets},
			},
		}
		if answers != "" {
			b.Annotations[apisv1alpha2.AcceptablePermissionClaimsAnnotation] = answers
		}
		return b
	}

	for _, tc := range []struct {
		name   string
		b      *apisv1alpha1.APIBinding
		export *apisv1alpha1.APIExport
		want   map[string]string
	}{
		{
			name:   "v1alpha1 export and answers: nothing to keep",
			b:      binding(""),
			export: &apisv1alpha1.APIExport{Spec: export.Spec},
			want:   map[string]string{"team": "x"},
		},
		{
			name:   "verbs of the export, answers of all verbs",
			b:      binding(""),
			export: export,
			want: map[string]string{"team": "x",
				apisv1alpha2.StatusPermissionClaimsAnnotation: `[{"resource":"configmaps","verbs":["get","list"]}]`},
		},
		{
			name:   "verbs of the export and of the answer",
			b:      binding(`[{"resource":"configmaps","verbs":["get","list"],"selector":{"matchAll":true},"state":"Accepted"}]`),
			export: export,
			want: map[string]string{"team": "x",
				apisv1alpha2.AcceptablePermissionClaimsAnnotation: `[{"resource":"configmaps","verbs":["get","list"],"selector":{"matchAll":true},"state":"Accepted"}]`,
				apisv1alpha2.StatusPermissionClaimsAnnotation:     `[{"resource":"configmaps","verbs":["get","list"]}]`,
				apisv1alpha2.StatusAppliedClaimsAnnotation:        `[{"resource":"configmaps","verbs":["get","list"],"selector":{"matchAll":true}}]`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b.DeepCopy()
			setStatusClaimAnnotations(b, tc.export)
			if d := cmp.Diff(tc.want, b.Annotations); d != "" {
				t.Errorf("annotations (-want +got):\n%s", d)
			}
			if statusClaimAnnotationsEqual(b, tc.b) != (len(tc.want) == len(tc.b.Annotations)) {
				t.Errorf("statusClaimAnnotationsEqual does not see the change")
			}
		})
	}
}
