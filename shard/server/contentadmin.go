package server

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization"
)

// contentAdmin is the authorizer's hook for logical clusters that are not
// Ready: a user may enter one if allowed verb admin on workspaces/content
// of its Workspace, in the parent logical cluster (when the parent is on
// this shard). authz returns the shard's chain, which asks this again for
// a parent that is not Ready either.
func contentAdmin(lcs informers.Informer[*corev1alpha1.LogicalCluster], authz func() authorizer.Authorizer) authorization.ContentAdminFunc {
	return func(ctx context.Context, cluster logicalcluster.Name, u user.Info) (bool, error) {
		lc, err := lcs.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, err
		}
		owner := lc.Spec.Owner
		if owner == nil {
			return false, nil
		}
		if owner.APIVersion != tenancyv1alpha1.SchemeGroupVersion.String() || owner.Resource != "workspaces" || owner.Cluster == "" {
			return false, nil
		}
		parent := logicalcluster.Name(owner.Cluster)
		if !parent.IsValid() || parent == cluster {
			return false, nil
		}
		attrs := authorizer.AttributesRecord{
			User: u, Verb: "admin", ResourceRequest: true,
			APIGroup: tenancyv1alpha1.GroupName, APIVersion: tenancyv1alpha1.SchemeGroupVersion.Version,
			Resource: "workspaces", Subresource: "content", Name: owner.Name,
		}
		d, _, err := authz().Authorize(logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: parent}), attrs)
		return d == authorizer.DecisionAllow, err
	}
}
