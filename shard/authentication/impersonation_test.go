package authentication

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/scopes"
)

func TestScopeImpersonators(t *testing.T) {
	alice := authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) {
		return &authenticator.Response{User: &user.DefaultInfo{Name: "alice", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}}}, true, nil
	})
	auth := scopeImpersonators(alice)
	for _, tc := range []struct {
		name    string
		cluster *logicalcluster.Cluster
		header  http.Header
		want    []string // the scope values; nil: none
	}{
		{name: "no impersonation", cluster: &logicalcluster.Cluster{Name: "a"}},
		{name: "impersonating a user", cluster: &logicalcluster.Cluster{Name: "a", Path: "root:x"}, header: http.Header{"Impersonate-User": {"bob"}}, want: []string{"cluster:a"}},
		{name: "impersonating groups only", cluster: &logicalcluster.Cluster{Name: "b"}, header: http.Header{"Impersonate-Group": {"g"}}, want: []string{"cluster:b"}},
		{name: "impersonating extras", cluster: &logicalcluster.Cluster{Name: "b"}, header: http.Header{"Impersonate-Extra-Foo": {"x"}}, want: []string{"cluster:b"}},
		{name: "across all clusters", cluster: &logicalcluster.Cluster{Wildcard: true}, header: http.Header{"Impersonate-User": {"bob"}}},
		{name: "outside the cluster filter", header: http.Header{"Impersonate-User": {"bob"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/api", nil)
			if tc.cluster != nil {
				req = req.WithContext(logicalcluster.WithCluster(req.Context(), *tc.cluster))
			}
			req.Header = tc.header
			resp, ok, err := auth.AuthenticateRequest(req)
			if !ok || err != nil {
				t.Fatalf("ok %v err %v", ok, err)
			}
			u := resp.User
			got, scoped := u.GetExtra()[scopes.ExtraKey]
			if scoped != (tc.want != nil) || len(got) != len(tc.want) || (tc.want != nil && got[0] != tc.want[0]) {
				t.Errorf("scopes %v, want %v", got, tc.want)
			}
			if u.GetName() != "alice" || len(u.GetGroups()) != 1 || u.GetExtra()["k"][0] != "v" {
				t.Errorf("the user changed: %+v", u)
			}
		})
	}
}
