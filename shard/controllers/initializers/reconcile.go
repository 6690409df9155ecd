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
	"k8s.io/apimachinery/pkg/types"
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
	// getClusterRoleBinding reads a ClusterRoleBinding from the server.
	getClusterRoleBinding func(ctx context.Context, cluster logicalcluster.Name, name string) (*rbacv1.ClusterRoleBinding, error)
	// updateClusterRoleBinding writes a ClusterRoleBinding with the
	// resourceVersion it carries.
	updateClusterRoleBinding func(ctx context.Context, cluster logicalcluster.Name, crb *rbacv1.ClusterRoleBinding) error
	// deleteClusterRoleBinding deletes a ClusterRoleBinding if its UID is
	// uid.
	deleteClusterRoleBinding func(ctx context.Context, cluster logicalcluster.Name, name string, uid types.UID) error
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

	// A failing initializer does not hold back the others, nor
	// status.URL: what is done is written, then the error is returned.
	var (
		done    []corev1alpha1.LogicalClusterInitializer
		stepErr error
	)
	if corev1alpha1.HasInitializer(lc.Status.Initializers, corev1alpha1.OwnerInitializer) {
		if err := r.bindOwner(ctx, key.Cluster, lc); err != nil {
			stepErr = err
		} else {
			done = append(done, corev1alpha1.OwnerInitializer)
		}
	}
	if corev1alpha1.HasInitializer(lc.Status.Initializers, UniversalInitializer) {
		err := r.createNamespace(ctx, key.Cluster, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: DefaultNamespace}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			stepErr = errors.Join(stepErr, fmt.Errorf("creating namespace %s: %w", DefaultNamespace, err))
		} else {
			done = append(done, UniversalInitializer)
		}
	}
	url := statusURL(r.externalURL, key.Cluster, lc)
	if url != "" && lc.Status.URL != "" && lc.Status.URL != url {
		logger.Info("Correcting status.URL of the logical cluster", "url", lc.Status.URL, "want", url)
	}
	return reconciler.Result{}, errors.Join(stepErr, r.writeStatus(ctx, key.Cluster, lc, done, url))
}

// writeStatus removes the initializers done from the status of lc and sets
// its status.URL to url, unless that changes nothing. On a conflict it
// reads the LogicalCluster again and applies the same to that.
func (r *initializer) writeStatus(ctx context.Context, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster, done []corev1alpha1.LogicalClusterInitializer, url string) error {
	current := lc
	for i := 0; ; i++ {
		next := current.DeepCopy()
		if !apply(next, done, url) {
			return nil
		}
		err := r.updateStatus(ctx, cluster, next)
		switch {
		case err == nil:
			klog.FromContext(ctx).V(2).Info("Initialized logical cluster", "done", done, "left", next.Status.Initializers, "url", next.Status.URL)
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsConflict(err) || i >= maxConflictRetries:
			return fmt.Errorf("updating status of LogicalCluster: %w", err)
		}
		current, err = r.readLogicalCluster(ctx, cluster)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("reading LogicalCluster after a conflict: %w", err)
		case current.DeletionTimestamp != nil || current.UID != lc.UID:
			return nil
		}
	}
}

// bindOwner makes the owner of the logical cluster cluster-admin in it,
// through the ClusterRoleBinding workspace-admin. A binding of that name
// that exists already (someone may have created it first) counts only if
// it binds the ClusterRole cluster-admin, and gets the owner added to its
// subjects if it lacks them; other subjects are kept. One with another
// roleRef, which cannot be changed, is deleted and created anew.
func (r *initializer) bindOwner(ctx context.Context, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) error {
	logger := klog.FromContext(ctx)
	annotation, ok := lc.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]
	if !ok {
		logger.V(2).Info("Logical cluster has no owner to bind")
		return nil
	}
	want, err := ownerBinding(annotation)
	if err != nil {
		// Retrying cannot fix the annotation; nobody gets bound.
		logger.Error(err, "Cannot bind the owner of the logical cluster", "annotation", tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey)
		return nil
	}
	owner := want.Subjects[0]
	for range maxConflictRetries {
		err := r.createClusterRoleBinding(ctx, cluster, want)
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterRoleBinding %s: %w", WorkspaceAdminBinding, err)
		}
		existing, err := r.getClusterRoleBinding(ctx, cluster, WorkspaceAdminBinding)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading ClusterRoleBinding %s: %w", WorkspaceAdminBinding, err)
		}
		if existing.RoleRef != want.RoleRef {
			logger.Info("Replacing a ClusterRoleBinding that binds another role", "clusterRoleBinding", WorkspaceAdminBinding,
				"roleRef", existing.RoleRef.Kind+"/"+existing.RoleRef.Name)
			err := r.deleteClusterRoleBinding(ctx, cluster, WorkspaceAdminBinding, existing.UID)
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("deleting ClusterRoleBinding %s: %w", WorkspaceAdminBinding, err)
			}
			continue
		}
		if slices.Contains(existing.Subjects, owner) {
			return nil
		}
		next := existing.DeepCopy()
		next.Subjects = append(next.Subjects, owner)
		err = r.updateClusterRoleBinding(ctx, cluster, next)
		switch {
		case err == nil:
			logger.Info("Added the owner to an existing ClusterRoleBinding", "clusterRoleBinding", WorkspaceAdminBinding)
			return nil
		case !apierrors.IsConflict(err) && !apierrors.IsNotFound(err):
			return fmt.Errorf("updating ClusterRoleBinding %s: %w", WorkspaceAdminBinding, err)
		}
	}
	return fmt.Errorf("ClusterRoleBinding %s keeps changing", WorkspaceAdminBinding)
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

// statusURL is the status.URL lc must have, or "" if the controller
// leaves it alone: <externalURL>/clusters/<path or cluster name>. System
// clusters, which are not reachable through the front-proxy, get none. A
// status.URL that differs, whoever wrote it, is corrected.
func statusURL(externalURL string, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) string {
	if externalURL == "" || cluster.IsSystem() {
		return ""
	}
	path := lc.Annotations[logicalcluster.PathAnnotationKey]
	if path == "" {
		path = cluster.String()
	}
	return strings.TrimRight(externalURL, "/") + "/clusters/" + path
}

// apply removes the initializers done from the status of lc and sets
// status.URL to url unless url is empty. It tells whether lc changed.
func apply(lc *corev1alpha1.LogicalCluster, done []corev1alpha1.LogicalClusterInitializer, url string) bool {
	n := len(lc.Status.Initializers)
	lc.Status.Initializers = slices.DeleteFunc(lc.Status.Initializers, func(in corev1alpha1.LogicalClusterInitializer) bool {
		return slices.Contains(done, in)
	})
	changed := len(lc.Status.Initializers) != n
	if url != "" && lc.Status.URL != url {
		lc.Status.URL = url
		changed = true
	}
	return changed
}

// needsWork tells whether a LogicalCluster has something for this
// controller to do: a status.URL to set or correct, or a built-in
// initializer left.
func needsWork(lc *corev1alpha1.LogicalCluster, cluster logicalcluster.Name, externalURL string) bool {
	if lc.DeletionTimestamp != nil {
		return false
	}
	if url := statusURL(externalURL, cluster, lc); url != "" && lc.Status.URL != url {
		return true
	}
	for _, in := range handled {
		if corev1alpha1.HasInitializer(lc.Status.Initializers, in) {
			return true
		}
	}
	return false
}
