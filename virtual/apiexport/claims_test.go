package apiexport

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha2"
)

func TestClaimVerbs(t *testing.T) {
	configmaps := apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "configmaps"}, All: true}
	secrets := apisv1alpha1.PermissionClaim{GroupResource: apisv1alpha1.GroupResource{Resource: "secrets"}, All: true}
	v1Export := &apisv1alpha1.APIExport{Spec: apisv1alpha1.APIExportSpec{PermissionClaims: []apisv1alpha1.PermissionClaim{configmaps, secrets}}}
	v2Export := v1Export.DeepCopy()
	v2Export.Annotations = map[string]string{apisv1alpha2.PermissionClaimsAnnotation: `[{"resource":"configmaps","verbs":["get","list"]}]`}
	v2Binding := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			apisv1alpha2.AcceptablePermissionClaimsAnnotation: `[{"resource":"configmaps","verbs":["list","watch"],"selector":{"matchAll":true},"state":"Accepted"}]`,
		}},
		Spec: apisv1alpha1.APIBindingSpec{PermissionClaims: []apisv1alpha1.AcceptablePermissionClaim{
			{PermissionClaim: configmaps, State: apisv1alpha1.ClaimAccepted},
			{PermissionClaim: secrets, State: apisv1alpha1.ClaimAccepted},
		}},
	}
	broken := v2Binding.DeepCopy()
	broken.Annotations[apisv1alpha2.AcceptablePermissionClaimsAnnotation] = "{"

	for _, tt := range []struct {
		name              string
		exported, granted []string
		allowed           map[string]bool
	}{
		{"v1alpha1 claim, v1alpha1 answer: all verbs", claimVerbs(v1Export, &configmaps), answerVerbs(&apisv1alpha1.APIBinding{Spec: v2Binding.Spec}, configmaps),
			map[string]bool{"get": true, "create": true, "delete": true}},
		{"v1alpha2 claim, v1alpha1 answer: the claimed verbs", claimVerbs(v2Export, &configmaps), answerVerbs(&apisv1alpha1.APIBinding{Spec: v2Binding.Spec}, configmaps),
			map[string]bool{"get": true, "list": true, "watch": false, "create": false, "delete": false}},
		{"v1alpha2 claim, v1alpha2 answer: the verbs of both", claimVerbs(v2Export, &configmaps), answerVerbs(v2Binding, configmaps),
			map[string]bool{"get": false, "list": true, "watch": false, "create": false}},
		{"a claim of all verbs next to a narrowed one", claimVerbs(v2Export, &secrets), answerVerbs(v2Binding, secrets),
			map[string]bool{"get": true, "create": true, "deletecollection": true}},
		{"an answer that cannot be read grants nothing", claimVerbs(v1Export, &configmaps), answerVerbs(broken, configmaps),
			map[string]bool{"get": false, "list": false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for verb, want := range tt.allowed {
				if got := allows(tt.exported, verb) && allows(tt.granted, verb); got != want {
					t.Errorf("verb %q with claimed %v, accepted %v: allowed %v, want %v", verb, tt.exported, tt.granted, got, want)
				}
			}
		})
	}
}

func TestGrantedOf(t *testing.T) {
	for _, tt := range []struct{ exported, granted, want []string }{
		{[]string{"*"}, []string{"get"}, []string{"get"}},
		{[]string{"get", "list"}, []string{"*"}, []string{"get", "list"}},
		{[]string{"get", "list"}, []string{"list", "watch"}, []string{"list"}},
	} {
		if got := grantedOf(tt.exported, tt.granted); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("grantedOf(%v, %v) = %v, want %v", tt.exported, tt.granted, got, tt.want)
		}
	}
}

func TestNarrowVerbs(t *testing.T) {
	served := metav1.Verbs{"get", "list", "watch", "create", "delete"}
	if got := narrowVerbs(served, []string{"get", "list"}); !reflect.DeepEqual(got, metav1.Verbs{"get", "list"}) {
		t.Errorf("narrowVerbs = %v, want [get list]", got)
	}
	if got := narrowVerbs(served, []string{"*"}); !reflect.DeepEqual(got, served) {
		t.Errorf("narrowVerbs(*) = %v, want %v", got, served)
	}
}
