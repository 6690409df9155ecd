package filters

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// TestWritesContent pins what a logical cluster that is being deleted
// still accepts: reads, deletions, and updates and patches that let
// controllers remove their finalizers; not creates or server-side apply.
func TestWritesContent(t *testing.T) {
	for _, tc := range []struct {
		verb, group, resource, contentType string
		admin                              bool
		want                               bool
	}{
		{verb: "get", resource: "configmaps"},
		{verb: "list", resource: "configmaps"},
		{verb: "watch", resource: "configmaps"},
		{verb: "delete", resource: "configmaps"},
		{verb: "deletecollection", resource: "configmaps"},
		{verb: "create", resource: "configmaps", want: true},
		{verb: "update", resource: "configmaps"},
		{verb: "update", group: "example.com", resource: "gadgets"},
		{verb: "patch", resource: "configmaps", contentType: "application/merge-patch+json"},
		{verb: "patch", resource: "configmaps", contentType: "application/json-patch+json"},
		{verb: "patch", resource: "configmaps", contentType: "application/apply-patch+yaml", want: true},
		{verb: "create", group: "core.kcp.io", resource: "logicalclusters"},
		{verb: "update", group: "tenancy.kcp.io", resource: "workspaces", want: true},
		{verb: "update", group: "tenancy.kcp.io", resource: "workspaces", admin: true},
		{verb: "patch", group: "tenancy.kcp.io", resource: "workspaces", admin: true, contentType: "application/merge-patch+json"},
		{verb: "patch", group: "tenancy.kcp.io", resource: "workspaces", admin: true, contentType: "application/apply-patch+yaml", want: true},
	} {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		u := &user.DefaultInfo{Name: "tenant"}
		if tc.admin {
			u = &user.DefaultInfo{Name: "shard-admin", Groups: []string{user.SystemPrivilegedGroup}}
		}
		req = req.WithContext(request.WithUser(req.Context(), u))
		info := &request.RequestInfo{IsResourceRequest: true, Verb: tc.verb, APIGroup: tc.group, Resource: tc.resource}
		if got := writesContent(req, info); got != tc.want {
			t.Errorf("writesContent(%s %s.%s, %q, admin %v) = %v, want %v", tc.verb, tc.resource, tc.group, tc.contentType, tc.admin, got, tc.want)
		}
	}
}
