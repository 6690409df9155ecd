package authorization

import (
	"slices"
	"strings"
)

// RequiredGroups is the parsed annotation authorization.kcp.io/required-groups:
// a disjunction of conjunctions. A user satisfies it with all groups of at
// least one clause.
type RequiredGroups [][]string

// ParseRequiredGroups parses an annotation value: clauses separated by ","
// (OR), each a list of groups separated by ";" (AND), e.g. "a;b,c" for a
// and b, or c. Blanks around names and empty names are dropped; a value
// with no group at all yields no clause, which nobody satisfies.
func ParseRequiredGroups(value string) RequiredGroups {
	var clauses RequiredGroups
	for _, clause := range strings.Split(value, ",") {
		var groups []string
		for _, g := range strings.Split(clause, ";") {
			if g = strings.TrimSpace(g); g != "" {
				groups = append(groups, g)
			}
		}
		if len(groups) > 0 {
			clauses = append(clauses, groups)
		}
	}
	return clauses
}

// SatisfiedBy tells whether groups include every group of some clause.
func (r RequiredGroups) SatisfiedBy(groups []string) bool {
	for _, clause := range r {
		if !slices.ContainsFunc(clause, func(g string) bool { return !slices.Contains(groups, g) }) {
			return true
		}
	}
	return false
}

// String writes the requirement back in annotation syntax.
func (r RequiredGroups) String() string {
	clauses := make([]string, len(r))
	for i, c := range r {
		clauses[i] = strings.Join(c, ";")
	}
	return strings.Join(clauses, ",")
}
