// Package shardadmin tells shard admins apart: members of system:masters,
// such as the shard's loopback client, its controllers and the admin
// kubeconfig. They pass every authorization check, may act across all
// logical clusters and in system clusters, and are exempt from the
// restrictions admission puts on tenants.
package shardadmin

import (
	"slices"

	"k8s.io/apiserver/pkg/authentication/user"
)

// Group is the group of shard admins.
const Group = user.SystemPrivilegedGroup

// Is tells whether u is a shard admin; nil is not.
func Is(u user.Info) bool {
	return u != nil && slices.Contains(u.GetGroups(), Group)
}
