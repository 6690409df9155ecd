package server

import (
	"regexp"
	"testing"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

func TestHomePath(t *testing.T) {
	seen := map[string]string{}
	for _, user := range []string{"adam", "kcp-admin", "shard-admin", "Alice@example.com", "system:serviceaccount:ns:sa", "x"} {
		p := HomePath(HomePrefix, user, 2, 2)
		if !regexp.MustCompile(`^root:users:[a-z][a-z0-9]:[a-z][a-z0-9]:[a-z0-9]([-a-z0-9]*[a-z0-9])?$`).MatchString(p.String()) || !p.IsValid() {
			t.Errorf("home of %q: %q is not root:users:<b>:<b>:<name>", user, p)
		}
		if again := HomePath(HomePrefix, user, 2, 2); again.String() != p.String() {
			t.Errorf("home of %q not deterministic: %s vs %s", user, p, again)
		}
		if other, dup := seen[p.String()]; dup {
			t.Errorf("%q and %q share the home %s", user, other, p)
		}
		seen[p.String()] = user
	}
	if p := HomePath(logicalcluster.NewPath("root:people"), "adam", 3, 1); !regexp.MustCompile(`^root:people:[a-z]:[a-z]:[a-z]:adam$`).MatchString(p.String()) {
		t.Errorf("3 levels of 1: %s", p)
	}
	if got := HomeName("adam"); got != "adam" {
		t.Errorf("HomeName(adam) = %q", got)
	}
	if a, b := HomeName("Adam"), HomeName("adam!"); a == b || a == "adam" {
		t.Errorf("user names that are not workspace names: %q, %q", a, b)
	}
}
