package initializingworkspaces

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
)

// InitializeVerb is the verb a user needs on the WorkspaceType of an
// initializer to use its virtual workspace.
const InitializeVerb = "initialize"

// authorize allows the request's user to act as initializer in: members of
// system:masters for system initializers, and for the initializer of a
// WorkspaceType whoever may "initialize" that type in its logical cluster.
func (h *handler) authorize(ctx context.Context, in corev1alpha1.LogicalClusterInitializer) error {
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return apierrors.NewUnauthorized("no authenticated user in the request")
	}
	if strings.HasPrefix(string(in), systemPrefix) {
		if shardadmin.Is(u) {
			return nil
		}
		return apierrors.NewForbidden(logicalClustersGR, "", fmt.Errorf("user %q cannot act as the system initializer %q: only members of %s can",
			u.GetName(), in, user.SystemPrivilegedGroup))
	}
	cluster, name, ok := tenancyv1alpha1.TypeForInitializer(in)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid initializer %q", in))
	}
	attrs := authorizer.AttributesRecord{
		User:            u,
		Verb:            InitializeVerb,
		APIGroup:        tenancyv1alpha1.SchemeGroupVersion.Group,
		APIVersion:      tenancyv1alpha1.SchemeGroupVersion.Version,
		Resource:        "workspacetypes",
		Name:            string(name),
		ResourceRequest: true,
	}
	typeCtx := logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: logicalcluster.Name(cluster)})
	decision, reason, err := h.authz.Authorize(typeCtx, attrs)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Authorizing an initializer failed", "user", u.GetName(), "err", err)
	}
	msg := fmt.Sprintf("user %q cannot %s workspaces of type %q in logical cluster %q", u.GetName(), InitializeVerb, name, cluster)
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(tenancyv1alpha1.Resource("workspacetypes"), string(name), fmt.Errorf("%s", msg))
}

// initializerSelector returns the label selector of a list or watch: the
// client's own selector and the label of the initializer.
func initializerSelector(client string, in corev1alpha1.LogicalClusterInitializer) (string, error) {
	own := corev1alpha1.InitializerLabelKey(in) + "=" + corev1alpha1.InitializerLabelValue(in)
	if strings.TrimSpace(client) == "" {
		return own, nil
	}
	if _, err := labels.Parse(client); err != nil {
		return "", apierrors.NewBadRequest(fmt.Sprintf("invalid label selector %q: %v", client, err))
	}
	return client + "," + own, nil
}
