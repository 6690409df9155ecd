package authorization

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRequiredGroups(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  RequiredGroups
	}{
		{"a", RequiredGroups{{"a"}}},
		{"a;b", RequiredGroups{{"a", "b"}}},
		{"a,b", RequiredGroups{{"a"}, {"b"}}},
		{"a;b,c", RequiredGroups{{"a", "b"}, {"c"}}},
		{" a ; b , c ;", RequiredGroups{{"a", "b"}, {"c"}}},
		{"system:kcp:admin;org:team-1", RequiredGroups{{"system:kcp:admin", "org:team-1"}}},
		{",;,", nil},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got := ParseRequiredGroups(tc.value)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := ParseRequiredGroups(" a ; b , c ;").String(); got != "a;b,c" {
		t.Errorf("String() = %q", got)
	}
}

func TestRequiredGroupsSatisfiedBy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		value  string
		groups []string
		want   bool
	}{
		{"single group held", "a", []string{"x", "a"}, true},
		{"single group missing", "a", []string{"x"}, false},
		{"conjunction held", "a;b", []string{"b", "a"}, true},
		{"conjunction half held", "a;b", []string{"a"}, false},
		{"disjunction, second clause", "a;b,c", []string{"c"}, true},
		{"disjunction, first clause", "a;b,c", []string{"a", "b"}, true},
		{"disjunction, neither", "a;b,c", []string{"a", "d"}, false},
		{"no groups", "a", nil, false},
		{"no clause is never satisfied", ";", []string{"a"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseRequiredGroups(tc.value).SatisfiedBy(tc.groups); got != tc.want {
				t.Errorf("SatisfiedBy(%v) = %v, want %v", tc.groups, got, tc.want)
			}
		})
	}
}
