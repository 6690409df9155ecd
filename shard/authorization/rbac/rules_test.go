package rbac

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func resourceAttrs(verb, group, resource, subresource, namespace, name string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: "alice"}, Verb: verb, APIGroup: group, Resource: resource,
		Subresource: subresource, Namespace: namespace, Name: name, ResourceRequest: true,
	}
}

func pathAttrs(verb, path string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "alice"}, Verb: verb, Path: path}
}

func TestRuleAllows(t *testing.T) {
	pods := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	for _, tc := range []struct {
		name  string
		rule  rbacv1.PolicyRule
		attrs authorizer.AttributesRecord
		want  bool
	}{
		{"exact verb, group and resource", pods, resourceAttrs("get", "", "pods", "", "ns", "p"), true},
		{"other verb", pods, resourceAttrs("delete", "", "pods", "", "ns", "p"), false},
		{"other group", pods, resourceAttrs("get", "apps", "pods", "", "ns", "p"), false},
		{"other resource", pods, resourceAttrs("get", "", "secrets", "", "ns", "p"), false},
		{"a resource does not cover its subresources", pods, resourceAttrs("get", "", "pods", "log", "ns", "p"), false},
		{"verb *", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods"}}, resourceAttrs("escalate", "", "pods", "", "", ""), true},
		{"group *", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"pods"}}, resourceAttrs("get", "x.io", "pods", "", "", ""), true},
		{"resource * covers subresources", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*"}}, resourceAttrs("get", "", "pods", "log", "", ""), true},
		{"resource/subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}}, resourceAttrs("get", "", "pods", "log", "", ""), true},
		{"resource/subresource does not cover the resource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/log"}}, resourceAttrs("get", "", "pods", "", "", ""), false},
		{"*/subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/status"}}, resourceAttrs("get", "", "deployments", "status", "", ""), true},
		{"*/subresource needs that subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/status"}}, resourceAttrs("get", "", "deployments", "scale", "", ""), false},
		{"*/subresource does not cover resources", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*/status"}}, resourceAttrs("get", "", "status", "", "", ""), false},
		{"resource name", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a", "b"}}, resourceAttrs("get", "", "configmaps", "", "ns", "b"), true},
		{"other resource name", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, resourceAttrs("get", "", "configmaps", "", "ns", "c"), false},
		{"resource names do not cover unnamed requests", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, resourceAttrs("list", "", "configmaps", "", "ns", ""), false},
		{"resource rule does not cover paths", pods, pathAttrs("get", "/pods"), false},
		{"exact URL", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, pathAttrs("get", "/healthz"), true},
		{"URL other verb", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, pathAttrs("post", "/healthz"), false},
		{"URL *", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, pathAttrs("get", "/anything"), true},
		{"URL prefix *", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, pathAttrs("get", "/apis/apps/v1"), true},
		{"URL prefix * covers the prefix itself", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, pathAttrs("get", "/apis/"), true},
		{"URL prefix * needs the prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, pathAttrs("get", "/api/v1"), false},
		{"URL without * is exact", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis"}}, pathAttrs("get", "/apis/apps"), false},
		{"access on /", rbacv1.PolicyRule{Verbs: []string{"access"}, NonResourceURLs: []string{"/"}}, pathAttrs("access", "/"), true},
		{"URL rule does not cover resources", rbacv1.PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, resourceAttrs("get", "", "pods", "", "", ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleAllows(tc.attrs, &tc.rule); got != tc.want {
				t.Errorf("RuleAllows = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAppliesTo(t *testing.T) {
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	sa := &user.DefaultInfo{Name: "system:serviceaccount:ci:builder", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ci"}}
	for _, tc := range []struct {
		name      string
		u         user.Info
		subjects  []rbacv1.Subject
		namespace string
		want      int
		applies   bool
	}{
		{"user", alice, []rbacv1.Subject{{Kind: "User", Name: "bob"}, {Kind: "User", Name: "alice"}}, "", 1, true},
		{"other user", alice, []rbacv1.Subject{{Kind: "User", Name: "bob"}}, "", 0, false},
		{"group", alice, []rbacv1.Subject{{Kind: "Group", Name: "devs"}}, "", 0, true},
		{"user name is not a group", alice, []rbacv1.Subject{{Kind: "Group", Name: "alice"}}, "", 0, false},
		{"service account with namespace", sa, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "ci", Name: "builder"}}, "", 0, true},
		{"service account in another namespace", sa, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "prod", Name: "builder"}}, "", 0, false},
		{"service account defaults to the binding namespace", sa, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "builder"}}, "ci", 0, true},
		{"service account without any namespace", sa, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "builder"}}, "", 0, false},
		{"service accounts group", sa, []rbacv1.Subject{{Kind: "Group", Name: "system:serviceaccounts:ci"}}, "", 0, true},
		{"service account subject does not match a user of that name", alice, []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "ci", Name: "alice"}}, "", 0, false},
		{"unknown kind", alice, []rbacv1.Subject{{Kind: "Robot", Name: "alice"}}, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i, ok := AppliesTo(tc.u, tc.subjects, tc.namespace)
			if ok != tc.applies || (ok && i != tc.want) {
				t.Errorf("AppliesTo = %d, %v; want %d, %v", i, ok, tc.want, tc.applies)
			}
		})
	}
}
