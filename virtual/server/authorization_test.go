package server

import (
	"context"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestPathAuthorizer(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{user.AllAuthenticated}}
	anonymous := &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	admin := &user.DefaultInfo{Name: "admin", Groups: []string{user.SystemPrivilegedGroup}}
	for _, tc := range []struct {
		user  user.Info
		verb  string
		path  string
		allow bool
	}{
		{alice, "list", "/services/apiexport/root:org/e/clusters/*/apis/g/v1/things", true},
		{alice, "create", "/services/initializingworkspaces/root:t/clusters/abc/api/v1/namespaces", true},
		{anonymous, "get", "/readyz", true},
		{anonymous, "get", "/livez/ping", true},
		{anonymous, "get", "/version", true},
		{anonymous, "post", "/readyz", false},
		{alice, "get", "/metrics", false},
		{admin, "get", "/metrics", true},
		{alice, "get", "/clusters/root/api/v1/namespaces", false},
		{alice, "get", "/services/apiexportx", false},
	} {
		attrs := authorizer.AttributesRecord{User: tc.user, Verb: tc.verb, Path: tc.path}
		d, _, err := pathAuthorizer().Authorize(context.Background(), attrs)
		if err != nil || (d == authorizer.DecisionAllow) != tc.allow {
			t.Errorf("%s %s %s: got %v %v, want allow=%v", tc.user.GetName(), tc.verb, tc.path, d, err, tc.allow)
		}
	}
}
