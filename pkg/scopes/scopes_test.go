package scopes

import (
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestContains(t *testing.T) {
	this := logicalcluster.Cluster{Name: "this"}
	for _, tc := range []struct {
		name    string
		scopes  []string // nil: no scope extra
		cluster logicalcluster.Cluster
		want    bool
	}{
		{name: "unscoped", cluster: this, want: true},
		{name: "unscoped, all clusters", cluster: logicalcluster.Cluster{Wildcard: true}, want: true},
		{name: "empty value", scopes: []string{""}, cluster: this},
		{name: "scoped here", scopes: []string{"cluster:this"}, cluster: this, want: true},
		{name: "scoped elsewhere", scopes: []string{"cluster:that"}, cluster: this},
		{name: "values are and'ed", scopes: []string{"cluster:this", "cluster:that"}, cluster: this},
		{name: "entries are or'ed", scopes: []string{"cluster:that,cluster:this"}, cluster: this, want: true},
		{name: "every value admits", scopes: []string{"cluster:that,cluster:this", "cluster:this"}, cluster: this, want: true},
		{name: "empty entries are skipped", scopes: []string{",,cluster:this"}, cluster: this, want: true},
		{name: "unknown kind", scopes: []string{"namespace:this"}, cluster: this},
		{name: "a path is not a name", scopes: []string{"cluster:root:this"}, cluster: this},
		{name: "scoped, all clusters", scopes: []string{"cluster:this"}, cluster: logicalcluster.Cluster{Wildcard: true}},
		{name: "prefix is not a match", scopes: []string{"cluster:thi"}, cluster: this},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &user.DefaultInfo{Name: "u"}
			if tc.scopes != nil {
				u.Extra = map[string][]string{ExtraKey: tc.scopes}
			}
			if got := Contains(u, tc.cluster); got != tc.want {
				t.Errorf("Contains(%v, %v) = %v, want %v", tc.scopes, tc.cluster, got, tc.want)
			}
		})
	}
}

func TestLimit(t *testing.T) {
	u := &user.DefaultInfo{Name: "u", UID: "1", Groups: []string{"g"}, Extra: map[string][]string{ExtraKey: {"cluster:a,cluster:b"}, "other": {"x"}}}
	limited := Limit(u, "b")
	if !Contains(limited, logicalcluster.Cluster{Name: "b"}) || Contains(limited, logicalcluster.Cluster{Name: "a"}) {
		t.Errorf("limited to b: %v", limited.GetExtra())
	}
	if limited.GetName() != "u" || limited.GetUID() != "1" || len(limited.GetGroups()) != 1 || limited.GetExtra()["other"][0] != "x" {
		t.Errorf("Limit lost the user: %+v", limited)
	}
	if len(u.Extra[ExtraKey]) != 1 {
		t.Errorf("Limit changed its argument: %v", u.Extra)
	}
	if !Contains(Limit(&user.DefaultInfo{Name: "v"}, "c"), logicalcluster.Cluster{Name: "c"}) {
		t.Error("an unscoped user limited to c is not in scope in c")
	}
}

func TestOutOfScope(t *testing.T) {
	got := OutOfScope(&user.DefaultInfo{Name: "u", Groups: []string{"team", user.AllAuthenticated, user.SystemPrivilegedGroup}, Extra: map[string][]string{"k": {"v"}}})
	if got.GetName() != user.Anonymous || len(got.GetGroups()) != 1 || got.GetGroups()[0] != user.AllAuthenticated || len(got.GetExtra()) != 0 {
		t.Errorf("OutOfScope = %+v", got)
	}
}
