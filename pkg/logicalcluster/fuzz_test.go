package logicalcluster

import (
	"strings"
	"testing"
)

// FuzzPath checks the properties the rest of the shard relies on for any
// string: a valid path round-trips, its parent joined with its base gives
// it back, every prefix path is valid, a valid name is one segment and
// never the wildcard, and nothing valid contains what could escape an etcd
// key or a URL segment.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"root", "root:org:team", "a", "a-b", "a:b", "", ":", "a::b", "-a", "a-", "*", "Root", "a/b", "a%2fb",
		"system:admin", "a.b", "..", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a:", 600) + "a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := NewPath(s)
		if got := p.String(); got != s {
			t.Fatalf("NewPath(%q).String() = %q", s, got)
		}
		if !IsValidPath(s) {
			if p.IsValid() {
				t.Fatalf("Path %q valid, string not", s)
			}
			return
		}
		if strings.ContainsAny(s, "/\\%.*?#&= \x00") || strings.Contains(s, "::") || strings.HasPrefix(s, ":") || strings.HasSuffix(s, ":") {
			t.Fatalf("valid path %q contains what may escape a key or a URL segment", s)
		}
		if s != strings.ToLower(s) {
			t.Fatalf("valid path %q is not lower case", s)
		}
		parent, ok := p.Parent()
		if ok {
			if !parent.IsValid() {
				t.Fatalf("parent %q of valid path %q is not valid", parent, s)
			}
			if got := parent.Join(p.Base()).String(); got != s {
				t.Fatalf("Parent().Join(Base()) of %q = %q", s, got)
			}
		} else if strings.Contains(s, Separator) {
			t.Fatalf("path %q with a separator has no parent", s)
		}
		name, isName := p.Name()
		if isName != !strings.Contains(s, Separator) {
			t.Fatalf("Name() of %q: %q, %v", s, name, isName)
		}
		if isName && (!name.IsValid() || name == Wildcard || name.String() != s) {
			t.Fatalf("name %q of path %q is not a valid name", name, s)
		}
	})
}
