package logicalcluster

import "testing"

func TestIsValidPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"root", true},
		{"root:org:team", true},
		{"system:admin", true},
		{"a-b:c1", true},
		{"", false},
		{"Root", false},
		{"-a", false},
		{"a-", false},
		{"a::b", false},
		{"a:", false},
		{":a", false},
		{"a_b", false},
		{"*", false},
		{"a/b", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := IsValidPath(tc.in); got != tc.want {
				t.Errorf("IsValidPath(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestPath(t *testing.T) {
	p := NewPath("root:org:team")
	if p.Base() != "team" {
		t.Errorf("Base = %q", p.Base())
	}
	parent, ok := p.Parent()
	if !ok || parent.String() != "root:org" {
		t.Errorf("Parent = %q, %v", parent, ok)
	}
	if got := parent.Join("other").String(); got != "root:org:other" {
		t.Errorf("Join = %q", got)
	}
	if p.String() != "root:org:team" {
		t.Errorf("Join mutated the receiver: %q", p)
	}
	if _, ok := NewPath("root").Parent(); ok {
		t.Errorf("root has no parent")
	}
	if n, ok := NewPath("root").Name(); !ok || n != Root {
		t.Errorf("Name = %q, %v", n, ok)
	}
	if Wildcard.IsValid() {
		t.Errorf("wildcard is not a valid name")
	}
	if !SystemAdmin.IsSystem() || Root.IsSystem() {
		t.Errorf("IsSystem wrong")
	}
}
