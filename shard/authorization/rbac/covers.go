package rbac

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Covers tells whether the owner rules grant everything the servant rules
// grant, and lists what they do not, as rules with one verb, one API group
// and resource (or one URL) and at most one resource name each. It is the
// escalation check of RBAC: nobody may grant what they do not hold.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var missing []rbacv1.PolicyRule
	for _, s := range servant {
		for _, atom := range BreakdownRule(s) {
			if !slices.ContainsFunc(owner, func(o rbacv1.PolicyRule) bool { return ruleCovers(&o, &atom) }) {
				missing = append(missing, atom)
			}
		}
	}
	return len(missing) == 0, missing
}

// BreakdownRule splits a rule into equivalent rules with one verb, one API
// group, one resource and at most one resource name, or one verb and one
// non-resource URL.
func BreakdownRule(rule rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var atoms []rbacv1.PolicyRule
	for _, group := range rule.APIGroups {
		for _, resource := range rule.Resources {
			for _, verb := range rule.Verbs {
				if len(rule.ResourceNames) == 0 {
					atoms = append(atoms, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}})
					continue
				}
				for _, name := range rule.ResourceNames {
					atoms = append(atoms, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}, ResourceNames: []string{name}})
				}
			}
		}
	}
	for _, url := range rule.NonResourceURLs {
		for _, verb := range rule.Verbs {
			atoms = append(atoms, rbacv1.PolicyRule{NonResourceURLs: []string{url}, Verbs: []string{verb}})
		}
	}
	return atoms
}

// ruleCovers tells whether owner grants all of atom, a rule with at most one
// verb, group, resource, resource name or URL each.
func ruleCovers(owner, atom *rbacv1.PolicyRule) bool {
	if !coversAll(owner.Verbs, atom.Verbs, rbacv1.VerbAll) || !coversAll(owner.APIGroups, atom.APIGroups, rbacv1.APIGroupAll) {
		return false
	}
	if !resourcesCover(owner.Resources, atom.Resources) || !urlsCover(owner.NonResourceURLs, atom.NonResourceURLs) {
		return false
	}
	// An owner limited to names covers only those names, never all of them.
	if len(owner.ResourceNames) == 0 {
		return true
	}
	return len(atom.ResourceNames) > 0 && coversAll(owner.ResourceNames, atom.ResourceNames, "")
}

// coversAll tells whether owned holds every wanted value, or all ("" for
// no wildcard).
func coversAll(owned, wanted []string, all string) bool {
	if all != "" && slices.Contains(owned, all) {
		return true
	}
	for _, w := range wanted {
		if !slices.Contains(owned, w) {
			return false
		}
	}
	return true
}

// resourcesCover tells whether owned resources cover the wanted ones: "*",
// the same name, or "*/sub" for a subresource "res/sub".
func resourcesCover(owned, wanted []string) bool {
	if slices.Contains(owned, rbacv1.ResourceAll) {
		return true
	}
	for _, w := range wanted {
		if slices.Contains(owned, w) {
			continue
		}
		_, sub, isSub := strings.Cut(w, "/")
		if !isSub || !slices.Contains(owned, "*/"+sub) {
			return false
		}
	}
	return true
}

// urlsCover tells whether every wanted URL is covered by an owned URL
// pattern.
func urlsCover(owned, wanted []string) bool {
	for _, w := range wanted {
		if !slices.ContainsFunc(owned, func(o string) bool { return urlCovers(o, w) }) {
			return false
		}
	}
	return true
}
