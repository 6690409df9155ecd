package rbac

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// CompactRules merges rules that differ only in their verbs and otherwise
// name one API group and resource (with at most one resource name) or one
// URL, as the rules Covers reports missing do. Other rules are kept as
// they are. The order of first appearance is kept.
func CompactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type simple struct {
		group, resource, name, url string
		hasName                    bool
	}
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	index := map[simple]int{}
	for _, r := range rules {
		var key simple
		switch {
		case len(r.NonResourceURLs) == 1 && len(r.APIGroups) == 0 && len(r.Resources) == 0 && len(r.ResourceNames) == 0:
			key = simple{url: r.NonResourceURLs[0]}
		case len(r.NonResourceURLs) == 0 && len(r.APIGroups) == 1 && len(r.Resources) == 1 && len(r.ResourceNames) <= 1:
			key = simple{group: r.APIGroups[0], resource: r.Resources[0]}
			if len(r.ResourceNames) == 1 {
				key.name, key.hasName = r.ResourceNames[0], true
			}
		default:
			out = append(out, *r.DeepCopy())
			continue
		}
		if i, ok := index[key]; ok {
			for _, v := range r.Verbs {
				if !slices.Contains(out[i].Verbs, v) {
					out[i].Verbs = append(out[i].Verbs, v)
				}
			}
			continue
		}
		index[key] = len(out)
		out = append(out, *r.DeepCopy())
	}
	return out
}

// CompactString describes a rule in one line for error messages, the way
// Kubernetes does: {APIGroups:["apps"], Resources:["deployments"],
// Verbs:["get" "list"]}, leaving out empty fields.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, values []string) {
		if len(values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", name, values))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}
