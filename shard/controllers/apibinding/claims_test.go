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

func TestSetClaimsCondition(t *testing.T) {
	configmaps := apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true}
	secrets := apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, All: true}
	export := func(claims string) *apisv1alpha1.APIExport {
		e := &apisv1alpha1.APIExport{Spec: apisv1alpha1.APIExportSpec{PermissionClaims: []apisv1alpha1.PermissionClaim{configmaps}}}
		if claims != "" {
			e.Annotations = map[string]string{apisv1alpha2.PermissionClaimsAnnotation: claims}
		}
		return e
	}
	binding := func(answers string, claims ...apisv1alpha1.PermissionClaim) *apisv1alpha1.APIBinding {
		b := &apisv1alpha1.APIBinding{}
		for _, c := range claims {
			b.Spec.PermissionClaims = append(b.Spec.PermissionClaims, apisv1alpha1.AcceptablePermissionClaim{PermissionClaim: c, State: apisv1alpha1.ClaimAccepted})
		}
		if answers != "" {
			b.Annotations = map[string]string{apisv1alpha2.AcceptablePermissionClaimsAnnotation: answers}
		}
		return b
	}
	for _, tc := range []struct {
		name           string
		export         *apisv1alpha1.APIExport
		binding        *apisv1alpha1.APIBinding
		status, reason string
	}{
		{"all verbs on both sides", export(""), binding("", configmaps), "True", ""},
		{"a claim the export does not make", export(""), binding("", configmaps, secrets), "False", apisv1alpha1.InvalidPermissionClaimsReason},
		{"fewer verbs than the export's", export(`[{"resource":"configmaps","verbs":["get","list"]}]`),
			binding(`[{"resource":"configmaps","verbs":["get"],"selector":{"matchAll":true},"state":"Accepted"}]`, configmaps), "False", apisv1alpha1.PermissionClaimsMismatchReason},
		{"the same verbs in another order", export(`[{"resource":"configmaps","verbs":["get","list"]}]`),
			binding(`[{"resource":"configmaps","verbs":["list","get"],"selector":{"matchAll":true},"state":"Accepted"}]`, configmaps), "True", ""},
		{"the default selector accepted", export(`[{"resource":"configmaps","verbs":["*"],"defaultSelector":{"matchAll":true}}]`), binding("", configmaps), "True", ""},
	} {
		b := tc.binding
		setClaimsCondition(b, tc.export)
		var status, reason string
		for _, c := range b.Status.Conditions {
			if c.Type == apisv1alpha1.PermissionClaimsValid {
				status, reason = string(c.Status), c.Reason
			}
		}
		if status != tc.status || reason != tc.reason {
			t.Errorf("%s: PermissionClaimsValid %s %s, want %s %s", tc.name, status, reason, tc.status, tc.reason)
		}
	}
}
