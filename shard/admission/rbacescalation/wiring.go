package rbacescalation

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization"
)

// userAgent names the plugin's live lookups in the API server's logs.
const userAgent = "tessera-admission-rbacescalation"

// NewForAuthorizer returns the plugin for a shard whose authorizer is a:
// rules and role references are resolved through its RBAC store, escalate
// and bind are asked of a itself, and roles the store does not know yet
// are read live through per-cluster clients derived from loopback, the
// shard's admin config for its base URL.
func NewForAuthorizer(a *authorization.Authorizer, loopback *rest.Config) (*Plugin, error) {
	cfg := rest.CopyConfig(loopback)
	rest.AddUserAgent(cfg, userAgent)
	clients, err := clusters.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s admission clients: %w", PluginName, err)
	}
	return New(Dependencies{
		RulesFor:         a.PolicyRulesFor,
		RoleRefRules:     a.RoleRefRules,
		LiveRoleRefRules: liveRoleRefRules(clients),
		Authorizer:       a,
		Ready:            a.HasSynced,
	}), nil
}

// liveRoleRefRules reads the role a binding refers to from the API server,
// with the ClusterRoles of system:admin as fallback, as the authorizer does.
func liveRoleRefRules(clients *clusters.ClusterClientset) func(ctx context.Context, cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	return func(ctx context.Context, cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
		client, err := clients.For(cluster)
		if err != nil {
			return nil, err
		}
		switch ref.Kind {
		case "Role":
			role, err := client.RbacV1().Roles(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return role.Rules, nil
		case "ClusterRole":
			role, err := client.RbacV1().ClusterRoles().Get(ctx, ref.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && cluster != logicalcluster.SystemAdmin {
				admin, aerr := clients.For(logicalcluster.SystemAdmin)
				if aerr != nil {
					return nil, aerr
				}
				role, err = admin.RbacV1().ClusterRoles().Get(ctx, ref.Name, metav1.GetOptions{})
			}
			if err != nil {
				return nil, err
			}
			return role.Rules, nil
		default:
			return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
		}
	}
}
