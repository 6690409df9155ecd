// Package maximalpermission is the maximal permission policy of
// APIExports, the slot the authorizer chain leaves for it
// (authorization.Config.MaximalPermissionPolicy): a request on a resource
// bound through an APIBinding whose APIExport has
// spec.maximalPermissionPolicy.local must also be allowed by the RBAC of
// the export's logical cluster (and the bootstrap policy, as every policy
// decision) for the same verb and resource, with the user name and every
// group prefixed with "apis.kcp.io:binding:". So the provider bounds what
// any consumer can do with its resources, whatever the consumer's own RBAC
// says. Requests on anything else, and resources of exports without the
// policy, are decided by the local policy alone.
package maximalpermission

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// BoundExport returns the APIExport through which group/resource is bound
// in a logical cluster; false if it is not bound.
type BoundExport func(cluster logicalcluster.Name, group, resource string) (*apisv1alpha1.APIExport, bool)

// Wrap returns the MaximalPermissionPolicy hook of the authorizer chain.
func Wrap(bound BoundExport) func(delegate authorizer.Authorizer) authorizer.Authorizer {
	return func(delegate authorizer.Authorizer) authorizer.Authorizer {
		return authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
			d, reason, err := delegate.Authorize(ctx, attrs)
			if d != authorizer.DecisionAllow || !attrs.IsResourceRequest() {
				return d, reason, err
			}
			cluster, ok := logicalcluster.ClusterFrom(ctx)
			if !ok || cluster.Wildcard {
				return d, reason, err
			}
			export, ok := bound(cluster.Name, attrs.GetAPIGroup(), attrs.GetResource())
			if !ok || export.Spec.MaximalPermissionPolicy == nil || export.Spec.MaximalPermissionPolicy.Local == nil {
				return d, reason, err
			}
			exportCtx := logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: logicalcluster.From(export)})
			pd, preason, perr := delegate.Authorize(exportCtx, prefixed(attrs))
			if perr != nil {
				return authorizer.DecisionNoOpinion, "", perr
			}
			if pd != authorizer.DecisionAllow {
				return authorizer.DecisionDeny, fmt.Sprintf("denied by the maximal permission policy of APIExport %s|%s: %s",
					logicalcluster.From(export), export.Name, preason), nil
			}
			return d, reason, nil
		})
	}
}

// prefixed returns attrs with the user's name and groups prefixed for the
// provider's RBAC.
func prefixed(attrs authorizer.Attributes) authorizer.Attributes {
	u := attrs.GetUser()
	groups := make([]string, 0, len(u.GetGroups()))
	for _, g := range u.GetGroups() {
		groups = append(groups, apisv1alpha1.MaximalPermissionPolicyRBACUserGroupPrefix+g)
	}
	return withUser{Attributes: attrs, user: &user.DefaultInfo{
		Name:   apisv1alpha1.MaximalPermissionPolicyRBACUserGroupPrefix + u.GetName(),
		UID:    u.GetUID(),
		Groups: groups,
	}}
}

type withUser struct {
	authorizer.Attributes
	user user.Info
}

func (a withUser) GetUser() user.Info { return a.user }
