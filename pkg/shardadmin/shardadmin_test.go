package shardadmin

import (
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
)

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    user.Info
		want bool
	}{
		{"nil", nil, false},
		{"no groups", &user.DefaultInfo{Name: "alice"}, false},
		{"other groups", &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated", "system:master"}}, false},
		{"masters", &user.DefaultInfo{Name: "admin", Groups: []string{"system:authenticated", "system:masters"}}, true},
		{"masters by name only", &user.DefaultInfo{Name: "system:masters"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Is(tc.u); got != tc.want {
				t.Errorf("Is(%v) = %v, want %v", tc.u, got, tc.want)
			}
		})
	}
}
