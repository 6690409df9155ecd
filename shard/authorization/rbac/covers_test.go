package rbac

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

func rule(verbs, groups, resources []string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func TestCovers(t *testing.T) {
	all := []rbacv1.PolicyRule{rule([]string{"*"}, []string{"*"}, []string{"*"}), {Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}
	for _, tc := range []struct {
		name         string
		owner        []rbacv1.PolicyRule
		servant      []rbacv1.PolicyRule
		wantCovered  bool
		wantUncovers []rbacv1.PolicyRule
	}{
		{"everything covers anything", all, []rbacv1.PolicyRule{
			rule([]string{"get"}, []string{"apps"}, []string{"deployments/scale"}),
			{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}},
		}, true, nil},
		{"nothing covers nothing", nil, nil, true, nil},
		{"same rule", []rbacv1.PolicyRule{rule([]string{"get", "list"}, []string{""}, []string{"pods"})},
			[]rbacv1.PolicyRule{rule([]string{"list"}, []string{""}, []string{"pods"})}, true, nil},
		{"missing verb", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods"})},
			[]rbacv1.PolicyRule{rule([]string{"get", "delete"}, []string{""}, []string{"pods"})}, false,
			[]rbacv1.PolicyRule{rule([]string{"delete"}, []string{""}, []string{"pods"})}},
		{"split over two owner rules", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods"}), rule([]string{"list"}, []string{""}, []string{"pods"})},
			[]rbacv1.PolicyRule{rule([]string{"get", "list"}, []string{""}, []string{"pods"})}, true, nil},
		{"*/subresource covers a subresource", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"*/status"})},
			[]rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods/status"})}, true, nil},
		{"resource does not cover its subresource", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods"})},
			[]rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods/log"})}, false,
			[]rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"pods/log"})}},
		{"names are covered by a rule without names", []rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"secrets"})},
			[]rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}}, true, nil},
		{"a rule with names does not cover all names", []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}},
			[]rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"secrets"})}, false,
			[]rbacv1.PolicyRule{rule([]string{"get"}, []string{""}, []string{"secrets"})}},
		{"a rule with names covers those names", []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"a", "b"}}},
			[]rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"b", "c"}}}, false,
			[]rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"c"}}}},
		{"URL prefix", []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}},
			[]rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/apps", "/api"}}}, false,
			[]rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/api"}}}},
		{"resource rules do not cover URLs", []rbacv1.PolicyRule{rule([]string{"*"}, []string{"*"}, []string{"*"})},
			[]rbacv1.PolicyRule{{Verbs: []string{"access"}, NonResourceURLs: []string{"/"}}}, false,
			[]rbacv1.PolicyRule{{Verbs: []string{"access"}, NonResourceURLs: []string{"/"}}}},
		{"escalate is a verb like others", []rbacv1.PolicyRule{rule([]string{"get", "create"}, []string{"rbac.authorization.k8s.io"}, []string{"roles"})},
			[]rbacv1.PolicyRule{rule([]string{"escalate"}, []string{"rbac.authorization.k8s.io"}, []string{"roles"})}, false,
			[]rbacv1.PolicyRule{rule([]string{"escalate"}, []string{"rbac.authorization.k8s.io"}, []string{"roles"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			covered, missing := Covers(tc.owner, tc.servant)
			if covered != tc.wantCovered {
				t.Errorf("covered = %v, want %v", covered, tc.wantCovered)
			}
			if diff := cmp.Diff(tc.wantUncovers, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompact(t *testing.T) {
	missing := []rbacv1.PolicyRule{
		rule([]string{"get"}, []string{""}, []string{"secrets"}),
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}},
		rule([]string{"list"}, []string{""}, []string{"secrets"}),
		rule([]string{"list"}, []string{"apps"}, []string{"deployments"}),
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"x"}},
		rule([]string{"get"}, []string{""}, []string{"secrets"}),
		{Verbs: []string{"post"}, NonResourceURLs: []string{"/metrics"}},
		rule([]string{"get"}, []string{"", "apps"}, []string{"secrets"}),
	}
	got := CompactRules(missing)
	var lines []string
	for _, r := range got {
		lines = append(lines, CompactString(r))
	}
	want := []string{
		`{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}`,
		`{NonResourceURLs:["/metrics"], Verbs:["get" "post"]}`,
		`{APIGroups:["apps"], Resources:["deployments"], Verbs:["list"]}`,
		`{APIGroups:[""], Resources:["secrets"], ResourceNames:["x"], Verbs:["get"]}`,
		`{APIGroups:["" "apps"], Resources:["secrets"], Verbs:["get"]}`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("compacted (-want +got):\n%s", diff)
	}
	if missing[0].Verbs[0] != "get" || len(missing[0].Verbs) != 1 {
		t.Errorf("CompactRules changed its input: %v", missing[0])
	}
}
