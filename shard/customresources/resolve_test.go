package customresources

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/endpoints/request"
)

func TestServable(t *testing.T) {
	crd := func(scope apiextensionsv1.ResourceScope, established apiextensionsv1.ConditionStatus) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Scope: scope,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
					{Name: "v1", Served: true, Storage: true},
					{Name: "v0", Served: false},
				},
			},
			Status: apiextensionsv1.CustomResourceDefinitionStatus{
				Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: established}},
			},
		}
	}
	namespaced := crd(apiextensionsv1.NamespaceScoped, apiextensionsv1.ConditionTrue)
	clusterScoped := crd(apiextensionsv1.ClusterScoped, apiextensionsv1.ConditionTrue)
	for _, tc := range []struct {
		name string
		crd  *apiextensionsv1.CustomResourceDefinition
		info request.RequestInfo
		want bool
	}{
		{"namespaced get", namespaced, request.RequestInfo{APIVersion: "v1", Namespace: "ns", Verb: "get"}, true},
		{"namespaced list across namespaces", namespaced, request.RequestInfo{APIVersion: "v1", Verb: "list"}, true},
		{"namespaced watch across namespaces", namespaced, request.RequestInfo{APIVersion: "v1", Verb: "watch"}, true},
		{"namespaced create without namespace", namespaced, request.RequestInfo{APIVersion: "v1", Verb: "create"}, false},
		{"cluster-scoped get", clusterScoped, request.RequestInfo{APIVersion: "v1", Verb: "get"}, true},
		{"cluster-scoped in a namespace", clusterScoped, request.RequestInfo{APIVersion: "v1", Namespace: "ns", Verb: "list"}, false},
		{"version not served", namespaced, request.RequestInfo{APIVersion: "v0", Namespace: "ns", Verb: "get"}, false},
		{"unknown version", namespaced, request.RequestInfo{APIVersion: "v2", Namespace: "ns", Verb: "get"}, false},
		{"not established", crd(apiextensionsv1.NamespaceScoped, apiextensionsv1.ConditionFalse), request.RequestInfo{APIVersion: "v1", Namespace: "ns", Verb: "get"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := servable(tc.crd, &tc.info); got != tc.want {
				t.Errorf("servable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckWildcard(t *testing.T) {
	for _, tc := range []struct {
		info    request.RequestInfo
		allowed bool
	}{
		{request.RequestInfo{Verb: "list"}, true},
		{request.RequestInfo{Verb: "watch"}, true},
		{request.RequestInfo{Verb: "get", Name: "x"}, false},
		{request.RequestInfo{Verb: "create"}, false},
		{request.RequestInfo{Verb: "deletecollection"}, false},
		{request.RequestInfo{Verb: "list", Subresource: "status"}, false},
	} {
		err := checkWildcard(&tc.info)
		if (err == nil) != tc.allowed {
			t.Errorf("checkWildcard(%+v) = %v, allowed %v", tc.info, err, tc.allowed)
		}
		if err != nil && !apierrors.IsBadRequest(err) {
			t.Errorf("checkWildcard(%+v) = %v, want BadRequest", tc.info, err)
		}
	}
}

func TestDeprecationWarning(t *testing.T) {
	spec := apiextensionsv1.CustomResourceDefinitionSpec{
		Group: "example.com",
		Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Widget"},
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true, Deprecated: true},
			{Name: "v1beta1", Served: true},
			{Name: "v1", Served: true},
			{Name: "v2", Served: false},
		},
	}
	if got, want := deprecationWarning("v1alpha1", spec), "example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := deprecationWarning("v1", spec), "example.com/v1 Widget is deprecated"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
