package authorization

import (
	"context"
	"errors"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/rbac"
)

// ClusterState is what the chain needs to know of a logical cluster, from
// its LogicalCluster.
type ClusterState struct {
	// Phase of the LogicalCluster; only Ready clusters are open to users.
	Phase corev1alpha1.LogicalClusterPhaseType
	// RequiredGroups is the value of the annotation
	// authorization.kcp.io/required-groups, empty if unset.
	RequiredGroups string
}

// ClusterStateFunc returns the state of a logical cluster, and false if its
// LogicalCluster does not exist.
type ClusterStateFunc func(logicalcluster.Name) (ClusterState, bool, error)

// ContentAdminFunc tells whether u administers the content of a logical
// cluster (verb admin on workspaces/content of its Workspace in the parent).
// Such users may enter the cluster before it is Ready; the chain asks only
// for clusters that are not Ready, and never for service accounts.
type ContentAdminFunc func(ctx context.Context, cluster logicalcluster.Name, u user.Info) (bool, error)

// Config is what the chain is built from.
type Config struct {
	// Store reads the RBAC objects of every logical cluster of the shard.
	// Required.
	Store rbac.Store
	// ClusterState reads LogicalClusters. Required.
	ClusterState ClusterStateFunc
	// ContentAdmin is the hook for admins of a workspace's content in its
	// parent. Optional: without it only system:masters may enter clusters
	// that are not Ready.
	ContentAdmin ContentAdminFunc
	// MaximalPermissionPolicy, if set, wraps the policy stage (local or
	// bootstrap RBAC) and may refuse what it would allow, for APIs bound
	// from APIExports. Optional.
	MaximalPermissionPolicy func(delegate authorizer.Authorizer) authorizer.Authorizer
}

// validate checks that the required fields are set.
func (c *Config) validate() error {
	var errs []error
	if c.Store == nil {
		errs = append(errs, errors.New("authorization: Config.Store is required"))
	}
	if c.ClusterState == nil {
		errs = append(errs, errors.New("authorization: Config.ClusterState is required"))
	}
	return utilerrors.NewAggregate(errs)
}
