package initializers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

const (
	// WorkspaceAdminBinding is the ClusterRoleBinding that makes the owner
	// of a workspace cluster-admin in it.
	WorkspaceAdminBinding = "workspace-admin"
	// DefaultNamespace is the namespace the universal initializer creates.
	DefaultNamespace = "default"
	// clusterAdmin is the ClusterRole bound to the owner.
	clusterAdmin = "cluster-admin"
	// maxConflictRetries bounds the re-reads after write conflicts.
	maxConflictRetries = 5
)

// UniversalInitializer is the initializer of the universal WorkspaceType
// of root, root:universal.
var UniversalInitializer = tenancyv1alpha1.InitializerFor(logicalcluster.Root.String(), tenancyv1alpha1.UniversalWorkspaceTypeName)

// handled are the initializers this package runs.
var handled = []corev1alpha1.LogicalClusterInitializer{corev1alpha1.OwnerInitializer, UniversalInitializer}

// initializer runs the built-in initializers. Its dependencies are plain
// functions, so it is tested without an API server.
type initializer struct {
	// externalURL is the base of status.URL.
	externalURL string
	// getLogicalCluster reads the LogicalCluster of a logical cluster
	// from the informer cache.
	getLogicalCluster func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	// readLogicalCluster reads it from the server, after a conflict.
	readLogicalCluster func(ctx context.Context, cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	// updateStatus writes the status of a LogicalCluster.
	updateStatus func(ctx context.Context, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) error
	// createClusterRoleBinding and createNamespace create objects in a
	// logical cluster; AlreadyExists is fine.
	createClusterRoleBinding func(ctx context.Context, cluster logicalcluster.Name, crb *rbacv1.ClusterRoleBinding) error
	createNamespace          func(ctx context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) error
}

func (r *initializer) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	lc, err := r.getLogicalCluster(key.Cluster)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if lc.DeletionTimestamp != nil {
		return reconciler.Result{}, nil
	}

	var done []corev1alpha1.LogicalClusterInitializer
	if corev1alpha1.HasInitializer(lc.Status.Initializers, corev1alpha1.OwnerInitializer) {
		if err := r.bindOwner(ctx, key.Cluster, lc); err != nil {
			return reconciler.Result{}, err
		}
		done = append(done, corev1alpha1.OwnerInitializer)
	}
	if corev1alpha1.HasInitializer(lc.Status.Initializers, UniversalInitializer) {
		err := r.createNamespace(ctx, key.Cluster, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return reconciler.Result{}, fmt.Errorf("creating namespace %s: %w", DefaultNamespace, err)
		}
		done = append(done, UniversalInitializer)
	}
	url := statusURL(r.externalURL, key.Cluster, lc)

	current := lc
	for i := 0; ; i++ {
		next := current.DeepCopy()
		if !apply(next, done, url) {
			return reconciler.Result{}, nil
		}
		err := r.updateStatus(ctx, key.Cluster, next)
		switch {
		case err == nil:
			logger.V(2).Info("Initialized logical cluster", "done", done, "left", next.Status.Initializers)
			return reconciler.Result{}, nil
		case apierrors.IsNotFound(err):
			return reconciler.Result{}, nil
		case !apierrors.IsConflict(err) || i >= maxConflictRetries:
			return reconciler.Result{}, fmt.Errorf("updating status of LogicalCluster: %w", err)
		}
		current, err = r.readLogicalCluster(ctx, key.Cluster)
		switch {
		case apierrors.IsNotFound(err):
			return reconciler.Result{}, nil
		case err != nil:
			return reconciler.Result{}, fmt.Errorf("reading LogicalCluster after a conflict: %w", err)
		case current.DeletionTimestamp != nil || current.UID != lc.UID:
			return reconciler.Result{}, nil
		}
	}
}

// bindOwner makes the owner of the logical cluster cluster-admin in it.
func (r *initializer) bindOwner(ctx context.Context, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) error {
	annotation, ok := lc.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]
	if !ok {
		klog.FromContext(ctx).V(2).Info("Logical cluster has no owner to bind")
		return nil
	}
	crb, err := ownerBinding(annotation)
	if err != nil {
		// Retrying cannot fix the annotation; nobody gets bound.
		klog.FromContext(ctx).Error(err, "Cannot bind the owner of the logical cluster", "annotation", tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey)
		return nil
	}
	if err := r.createClusterRoleBinding(ctx, cluster, crb); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRoleBinding %s: %w", WorkspaceAdminBinding, err)
	}
	return nil
}

// errNoUsername reports an owner annotation without a user name.
var errNoUsername = errors.New("owner has no username")

// ownerBinding returns the ClusterRoleBinding that makes the user of the
// owner annotation (JSON of an authentication/v1 UserInfo) cluster-admin.
func ownerBinding(annotation string) (*rbacv1.ClusterRoleBinding, error) {
	var user authenticationv1.UserInfo
	if err := json.Unmarshal([]byte(annotation), &user); err != nil {
		return nil, fmt.Errorf("decoding owner: %w", err)
	}
	if user.Username == "" {
		return nil, errNoUsername
	}
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: WorkspaceAdminBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterAdmin},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user.Username}},
	}, nil
}

// statusURL is the status.URL lc should get, or "" if it keeps its own:
// <externalURL>/clusters/<path or cluster name>. System clusters, which
// are not reachable through the front-proxy, get none.
func statusURL(externalURL string, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) string {
	if lc.Status.URL != "" || externalURL == "" || cluster.IsSystem() {
		return ""
	}
	path := lc.Annotations[logicalcluster.PathAnnotationKey]
	if path == "" {
		path = cluster.String()
	}
	return strings.TrimRight(externalURL, "/") + "/clusters/" + path
}

// apply removes the initializers done from the status of lc and sets
// status.URL to url if it is empty and url is not. It tells whether lc
// changed.
func apply(lc *corev1alpha1.LogicalCluster, done []corev1alpha1.LogicalClusterInitializer, url string) bool {
	n := len(lc.Status.Initializers)
	lc.Status.Initializers = slices.DeleteFunc(lc.Status.Initializers, func(in corev1alpha1.LogicalClusterInitializer) bool {
		return slices.Contains(done, in)
	})
	changed := len(lc.Status.Initializers) != n
	if lc.Status.URL == "" && url != "" {
		lc.Status.URL = url
		changed = true
	}
	return changed
}

// needsWork tells whether a LogicalCluster has something for this
// controller to do: no status.URL, or a built-in initializer left.
func needsWork(lc *corev1alpha1.LogicalCluster, cluster logicalcluster.Name, externalURL string) bool {
	if lc.DeletionTimestamp != nil {
		return false
	}
	if statusURL(externalURL, cluster, lc) != "" {
		return true
	}
	for _, in := range handled {
		if corev1alpha1.HasInitializer(lc.Status.Initializers, in) {
			return true
		}
	}
	return false
}
