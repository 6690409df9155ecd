package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// RuleAllows tells whether rule allows the request described by attrs.
// Resource requests match verbs, API groups, resources (with "*",
// "resource/subresource" and "*/subresource") and resource names;
// non-resource requests match verbs and URLs (exact, "*", or a prefix
// ending in "*").
func RuleAllows(attrs authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if !VerbMatches(rule, attrs.GetVerb()) {
		return false
	}
	if !attrs.IsResourceRequest() {
		return NonResourceURLMatches(rule, attrs.GetPath())
	}
	resource := attrs.GetResource()
	if sub := attrs.GetSubresource(); sub != "" {
		resource += "/" + sub
	}
	return APIGroupMatches(rule, attrs.GetAPIGroup()) &&
		ResourceMatches(rule, resource, attrs.GetSubresource()) &&
		ResourceNameMatches(rule, attrs.GetName())
}

// VerbMatches tells whether rule grants verb, literally or through "*".
func VerbMatches(rule *rbacv1.PolicyRule, verb string) bool {
	return containsOrAll(rule.Verbs, verb, rbacv1.VerbAll)
}

// APIGroupMatches tells whether rule covers the API group, literally or
// through "*".
func APIGroupMatches(rule *rbacv1.PolicyRule, group string) bool {
	return containsOrAll(rule.APIGroups, group, rbacv1.APIGroupAll)
}

// ResourceMatches tells whether rule covers a resource. combined is the
// resource with its subresource ("pods/log"), subresource is the
// subresource alone ("log", or empty). A rule resource "*" covers
// everything, subresources included; "*/log" covers the log subresource of
// every resource.
func ResourceMatches(rule *rbacv1.PolicyRule, combined, subresource string) bool {
	for _, r := range rule.Resources {
		switch {
		case r == rbacv1.ResourceAll, r == combined:
			return true
		case subresource != "" && strings.HasPrefix(r, "*/") && r[2:] == subresource:
			return true
		}
	}
	return false
}

// ResourceNameMatches tells whether rule covers the object name. A rule
// without resource names covers every name, and requests without a name
// (list, create by generateName) only if the rule names none.
func ResourceNameMatches(rule *rbacv1.PolicyRule, name string) bool {
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == name {
			return true
		}
	}
	return false
}

// NonResourceURLMatches tells whether rule covers a non-resource path:
// "*", the exact path, or a prefix of it followed by "*" ("/apis/*").
func NonResourceURLMatches(rule *rbacv1.PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if urlCovers(u, path) {
			return true
		}
	}
	return false
}

// urlCovers tells whether the rule URL pattern covers path.
func urlCovers(pattern, path string) bool {
	if pattern == rbacv1.NonResourceAll || pattern == path {
		return true
	}
	prefix, wildcard := strings.CutSuffix(pattern, "*")
	return wildcard && strings.HasPrefix(path, strings.TrimRight(prefix, "*"))
}

// containsOrAll tells whether values holds want or all.
func containsOrAll(values []string, want, all string) bool {
	for _, v := range values {
		if v == all || v == want {
			return true
		}
	}
	return false
}
