// Package scopes limits users to logical clusters with kcp's scope extra,
// authentication.kcp.io/scopes. Each value of the extra is a
// comma-separated list of cluster:<name> entries, any of which admits the
// user to that cluster; a user with several values is admitted only where
// every value admits it. A user without the extra is in scope everywhere.
package scopes

import (
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ExtraKey is the user extra that holds a user's scopes.
const ExtraKey = "authentication.kcp.io/scopes"

// clusterPrefix starts a scope entry that names a logical cluster.
const clusterPrefix = "cluster:"

// Contains tells whether u is in scope in the logical cluster c. Scoped
// users are never in scope across all clusters (the wildcard), and a scope
// entry of an unknown kind admits nowhere.
func Contains(u user.Info, c logicalcluster.Cluster) bool {
	values, scoped := u.GetExtra()[ExtraKey]
	if !scoped {
		return true
	}
	if c.Wildcard || c.Name.Empty() {
		return false
	}
	want := clusterPrefix + string(c.Name)
	for _, v := range values {
		if !slices.Contains(strings.Split(v, ","), want) {
			return false
		}
	}
	return true
}

// Limit returns u limited to cluster as well as to the scopes it has; u is
// not changed.
func Limit(u user.Info, cluster logicalcluster.Name) user.Info {
	extra := make(map[string][]string, len(u.GetExtra())+1)
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	extra[ExtraKey] = append(slices.Clip(extra[ExtraKey]), clusterPrefix+string(cluster))
	return &user.DefaultInfo{Name: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra}
}

// OutOfScope is who a user is where it is not in scope, as in kcp: an
// anonymous user, authenticated if u was. Bindings to u's name, groups and
// service account do not apply to it.
func OutOfScope(u user.Info) user.Info {
	out := &user.DefaultInfo{Name: user.Anonymous}
	if slices.Contains(u.GetGroups(), user.AllAuthenticated) {
		out.Groups = []string{user.AllAuthenticated}
	} else {
		out.Groups = []string{user.AllUnauthenticated}
	}
	return out
}
