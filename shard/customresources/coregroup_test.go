package customresources

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/endpoints/request"
)

func TestServesPath(t *testing.T) {
	for _, tc := range []struct {
		info request.RequestInfo
		want bool
	}{
		{request.RequestInfo{APIPrefix: "apis", APIGroup: "example.com", APIVersion: "v1"}, true},
		{request.RequestInfo{APIPrefix: "api", APIVersion: "v1"}, true},
		{request.RequestInfo{APIPrefix: "api", APIVersion: "v2"}, false},
		{request.RequestInfo{APIPrefix: "apis", APIVersion: "v1"}, false},
		{request.RequestInfo{APIPrefix: "other", APIGroup: "example.com", APIVersion: "v1"}, false},
	} {
		if got := ServesPath(&tc.info); got != tc.want {
			t.Errorf("ServesPath(%s %q %s) = %v, want %v", tc.info.APIPrefix, tc.info.APIGroup, tc.info.APIVersion, got, tc.want)
		}
	}
}

func TestInValidationGroup(t *testing.T) {
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{"type": "ClusterIP"}}}
	got := inValidationGroup(svc).(*unstructured.Unstructured)
	if got.GetAPIVersion() != validationGroup+"/v1" || got.GetKind() != "Service" || got.Object["spec"] == nil {
		t.Errorf("the copy = %v", got.Object)
	}
	if svc.GetAPIVersion() != "v1" {
		t.Errorf("the object was modified: %v", svc.Object)
	}
	// The validating strategy's validator compares the copy's apiVersion,
	// as its GroupVersion prints it, with "<group>/<version>".
	if gvk := got.GroupVersionKind(); gvk.GroupVersion().String() != validationGroup+"/v1" {
		t.Errorf("the copy's group version = %s", gvk.GroupVersion())
	}
	named := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	if inValidationGroup(named) != named {
		t.Errorf("an object of a named group is copied")
	}
}
