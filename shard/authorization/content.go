package authorization

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// WorkspaceAccessNotPermittedReason starts the reason of refusals by the
// workspace content authorizer, as in kcp.
const WorkspaceAccessNotPermittedReason = "workspace access not permitted"

// contentAccess is the outcome of the workspace content check.
type contentAccess struct {
	// groups are the per-request groups of a subject let in.
	groups []string
	// serviceAccount: the subject is a service account of the cluster.
	serviceAccount bool
}

// content is the workspace content authorizer: it decides whether u may
// enter cluster at all, whose LogicalCluster is in state st. A subject let
// in gets per-request groups; anyone else gets a verdict that ends the
// request. Reasons name the cluster as the request addressed it.
func (a *Authorizer) content(ctx context.Context, c logicalcluster.Cluster, st ClusterState, u user.Info) (contentAccess, *verdict) {
	cluster := c.Name
	if saClusters := serviceAccountClusters(u); len(saClusters) > 0 {
		if !slices.Contains(saClusters, string(cluster)) {
			v := deny(stageContent, fmt.Sprintf("%s: service account %q of logical cluster %q has no access to logical cluster %q",
				WorkspaceAccessNotPermittedReason, u.GetName(), strings.Join(saClusters, ","), c))
			return contentAccess{}, &v
		}
		if st.Phase != corev1alpha1.LogicalClusterPhaseReady {
			v := deny(stageContent, notReadyReason(c, st))
			return contentAccess{}, &v
		}
		return contentAccess{groups: []string{WorkspaceAccessGroup}, serviceAccount: true}, nil
	}

	if st.Phase != corev1alpha1.LogicalClusterPhaseReady {
		// Members of the admin group are let in: only system:masters can
		// hand it out (the initializing workspaces virtual workspace does,
		// by impersonation, to a workspace's initializers).
		admin := slices.Contains(u.GetGroups(), WorkspaceAdminGroup)
		if !admin && a.contentAdmin != nil {
			var err error
			if admin, err = a.contentAdmin(ctx, cluster, u); err != nil {
				v := verdict{decision: authorizer.DecisionNoOpinion, stage: stageContent,
					reason: WorkspaceAccessNotPermittedReason, err: fmt.Errorf("checking workspace content admin of %q: %w", c, err)}
				return contentAccess{}, &v
			}
		}
		if !admin {
			v := deny(stageContent, notReadyReason(c, st))
			return contentAccess{}, &v
		}
		return contentAccess{groups: []string{WorkspaceAccessGroup, WorkspaceAdminGroup}}, nil
	}

	if !a.hasAccess(cluster, u) {
		v := verdict{decision: authorizer.DecisionNoOpinion, stage: stageContent,
			reason: fmt.Sprintf("%s: no verb=access permission on / in logical cluster %q", WorkspaceAccessNotPermittedReason, c)}
		return contentAccess{}, &v
	}
	return contentAccess{groups: []string{WorkspaceAccessGroup}}, nil
}

// hasAccess tells whether the ClusterRoleBindings of cluster or of
// system:admin grant u verb access on "/".
func (a *Authorizer) hasAccess(cluster logicalcluster.Name, u user.Info) bool {
	attrs := authorizer.AttributesRecord{User: u, Verb: "access", Path: "/"}
	return a.local.AllowsIn(cluster, attrs) || a.bootstrap.AllowsIn(logicalcluster.SystemAdmin, attrs)
}

// notReadyReason explains why a cluster is closed.
func notReadyReason(cluster logicalcluster.Cluster, st ClusterState) string {
	phase := string(st.Phase)
	if phase == "" {
		phase = string(corev1alpha1.LogicalClusterPhaseScheduling)
	}
	return fmt.Sprintf("%s: logical cluster %q is not ready (phase %s)", WorkspaceAccessNotPermittedReason, cluster, phase)
}
