package rbacescalation

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// fullAuthority is everything: what one must hold to create an
// aggregated ClusterRole, which may gather any rule.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{rbacv1.VerbAll}, APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}},
	{Verbs: []string{rbacv1.VerbAll}, NonResourceURLs: []string{rbacv1.NonResourceAll}},
}

// coversAll tells whether owned grants everything.
func coversAll(owned []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	return rbac.Covers(owned, fullAuthority)
}

// confirmNoEscalation returns the error upstream returns when owned does
// not cover granted: the missing permissions, compacted and sorted, and the
// errors met resolving the requester's own roles, which may explain them.
func confirmNoEscalation(u user.Info, owned, granted []rbacv1.PolicyRule, resolveErr error) error {
	covered, missing := rbac.Covers(owned, granted)
	if covered {
		return nil
	}
	var lines []string
	for _, r := range rbac.CompactRules(missing) {
		lines = append(lines, rbac.CompactString(r))
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.GetName(), u.GetGroups(), strings.Join(lines, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", resolveErr)
	}
	return errors.New(msg)
}

// sameExceptGCFields tells whether obj equals old once owner references,
// finalizers, managed fields and the resource version are taken from old.
func sameExceptGCFields(obj, old runtime.Object) bool {
	copied := obj.DeepCopyObject()
	c, err := meta.Accessor(copied)
	if err != nil {
		return false
	}
	o, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	c.SetOwnerReferences(o.GetOwnerReferences())
	c.SetFinalizers(o.GetFinalizers())
	c.SetManagedFields(o.GetManagedFields())
	c.SetResourceVersion(o.GetResourceVersion())
	return equality.Semantic.DeepEqual(copied, old)
}
