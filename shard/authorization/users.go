package authorization

import (
	"slices"

	"k8s.io/apiserver/pkg/authentication/user"
)

const (
	// ServiceAccountClusterExtraKey is the user extra in which the
	// authenticator names the logical cluster a service account token was
	// issued in. A service account is let into that cluster only.
	ServiceAccountClusterExtraKey = "authentication.kcp.io/cluster-name"

	// kcpExtraPrefix prefixes the user extras kcp's authentication sets;
	// nobody but system:masters may impersonate them.
	kcpExtraPrefix = "authentication.kcp.io/"

	// WorkspaceAccessGroup is the per-request group of everyone the
	// workspace content authorizer lets into a logical cluster (as in kcp
	// before 0.11, named in the seed documentation); bindings in the
	// cluster may name it.
	WorkspaceAccessGroup = "system:kcp:clusterworkspace:access"

	// WorkspaceAdminGroup is the per-request group of administrators of a
	// workspace's content, added with WorkspaceAccessGroup when the
	// ContentAdmin hook grants it.
	WorkspaceAdminGroup = "system:kcp:clusterworkspace:admin"
)

// serviceAccountClusters returns the logical clusters that issued u's
// service account token, none for users.
func serviceAccountClusters(u user.Info) []string {
	return u.GetExtra()[ServiceAccountClusterExtraKey]
}

// withGroups returns u with more groups; u is not changed.
func withGroups(u user.Info, groups ...string) user.Info {
	if len(groups) == 0 {
		return u
	}
	all := make([]string, 0, len(u.GetGroups())+len(groups))
	all = append(all, u.GetGroups()...)
	for _, g := range groups {
		if !slices.Contains(all, g) {
			all = append(all, g)
		}
	}
	return &user.DefaultInfo{Name: u.GetName(), UID: u.GetUID(), Groups: all, Extra: u.GetExtra()}
}
