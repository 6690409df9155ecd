package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/registry/tenancy/workspaces"
)

// ClusterAnnotationKey is set on a Workspace to the logical cluster name
// chosen for it, together with core.kcp.io/shard, before the LogicalCluster
// is created. A reconcile that restarts after a crash finds the choice
// there and adopts a LogicalCluster it created, instead of creating a
// second one under a new name. Only names in the format the controller
// generates are taken from it (see isGeneratedClusterName); admission
// refuses users setting it.
const ClusterAnnotationKey = "internal.tenancy.kcp.io/cluster"

const (
	// maxScheduleAttempts bounds the names tried in one reconcile when
	// names are taken by other owners.
	maxScheduleAttempts = 5
	// maxConflictRetries bounds the re-reads after write conflicts in one
	// write.
	maxConflictRetries = 5
	// unschedulableRetry is how long a workspace that cannot be scheduled
	// (no matching shard, missing type) waits before the next attempt;
	// Shard events retry earlier.
	unschedulableRetry = 10 * time.Second
)

// workspaceClient reads and writes the Workspaces of the local shard.
type workspaceClient interface {
	Get(ctx context.Context, cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error)
	Update(ctx context.Context, cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error)
	UpdateStatus(ctx context.Context, cluster logicalcluster.Name, ws *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error)
	// Delete deletes the Workspace if its UID is uid.
	Delete(ctx context.Context, cluster logicalcluster.Name, name string, uid types.UID) error
}

// logicalClusterClient reaches the LogicalCluster "cluster" of a logical
// cluster on any shard, through the shard's baseURL.
type logicalClusterClient interface {
	Create(ctx context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name, lc *corev1alpha1.LogicalCluster) (*corev1alpha1.LogicalCluster, error)
	Get(ctx context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	// Delete deletes the LogicalCluster if its UID is uid.
	Delete(ctx context.Context, shard *corev1alpha1.Shard, cluster logicalcluster.Name, uid types.UID) error
}

// workspaceReconciler schedules Workspaces onto shards, follows their
// logical clusters until Ready, and deletes them. Its dependencies are
// plain functions and small interfaces, so it is tested without servers.
type workspaceReconciler struct {
	// localShard is the name of the shard the controller runs on; it is
	// assumed for scheduled workspaces without a shard annotation.
	localShard string
	// getWorkspace reads a Workspace from the informer cache.
	getWorkspace func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error)
	// listShards returns the Shards of the installation (in root).
	listShards func() ([]*corev1alpha1.Shard, error)
	// getShard returns the Shard named name, or a NotFound error.
	getShard func(name string) (*corev1alpha1.Shard, error)
	// getLogicalCluster reads the LogicalCluster of a local logical cluster
	// from the informer cache.
	getLogicalCluster func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	// readParent reads the LogicalCluster of a Workspace's parent, a local
	// logical cluster: what a child inherits (required groups) must not
	// come from a cache that lags behind the Workspace, so the cache is
	// read only once it has seen every write up to resourceVersion (the
	// Workspace's), and the server otherwise.
	readParent func(ctx context.Context, cluster logicalcluster.Name, resourceVersion string) (*corev1alpha1.LogicalCluster, error)
	// lookupType resolves WorkspaceType references.
	lookupType TypeLookup

	workspaces      workspaceClient
	logicalClusters logicalClusterClient

	// newName generates logical cluster names.
	newName func() logicalcluster.Name
	// backoff spaces out polls of logical clusters that are not Ready and
	// of shards that cannot be reached.
	backoff *backoff
	// written holds the newest resourceVersion of each Workspace that
	// this controller wrote (or read after a conflict) and whose event
	// the informer may not have delivered yet.
	written *versions
	// read holds, by Workspace, the newest resourceVersion of a
	// LogicalCluster of this shard that the controller got from the
	// server (created, or read with a GET) and the informer may not show
	// yet (see cachedLogicalCluster).
	read *versions
}

// reconcile brings the Workspace of key one step further: scheduling,
// following its logical cluster, or deleting it.
func (r *workspaceReconciler) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	ws, err := r.getWorkspace(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		r.backoff.reset(key)
		r.written.forget(key)
		r.read.forget(key)
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if wait, newer := r.written.newer(key, ws.ResourceVersion); newer {
		// The cache does not show this controller's own last write yet
		// (a reconcile that writes several times is typically started
		// again at once by the events of its first writes): a write
		// based on it could only conflict. The event of the newer
		// version brings the key back as soon as the cache has it; the
		// requeue is a safety net should it never come.
		klog.FromContext(ctx).V(4).Info("Cache is older than the last write of the workspace, waiting for it", "resourceVersion", ws.ResourceVersion)
		return reconciler.Result{RequeueAfter: wait}, nil
	}
	switch {
	case ws.DeletionTimestamp != nil:
		return r.finalize(ctx, key, ws)
	case ws.Spec.Cluster == "":
		return r.schedule(ctx, key, ws)
	default:
		return r.follow(ctx, key, ws)
	}
}

// schedule creates the logical cluster of an unscheduled Workspace on a
// shard and records it in the Workspace.
func (r *workspaceReconciler) schedule(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	if ws.Spec.Type == nil {
		return r.unschedulable(ctx, key, ws, 0, "spec.type is not set")
	}
	info, res, err := r.parentInfo(ctx, key, ws)
	if res != nil || err != nil {
		return deref(res), err
	}
	initializers, err := typeInitializers(*ws.Spec.Type, r.lookupType)
	switch {
	case errors.Is(err, errTypeCycle):
		return r.unschedulable(ctx, key, ws, 0, "%v", err)
	case isTypeNotFound(err):
		return r.unschedulable(ctx, key, ws, unschedulableRetry, "%v", err)
	case err != nil:
		return reconciler.Result{}, fmt.Errorf("computing initializers: %w", err)
	}

	var rejected logicalcluster.Name
	for range maxScheduleAttempts {
		var (
			cluster logicalcluster.Name
			shard   *corev1alpha1.Shard
		)
		ws, cluster, shard, res, err = r.ensureChoice(ctx, key, ws, rejected)
		if res != nil || err != nil || ws == nil {
			return deref(res), err
		}
		lc := newLogicalCluster(ws, key.Cluster, info, shard.Name, initializers)
		lc.Annotations[corev1alpha1.LogicalClusterOwnerShardAnnotationKey] = r.localShard
		created, err := r.logicalClusters.Create(ctx, shard, cluster, lc)
		if apierrors.IsAlreadyExists(err) {
			created, err = r.getFromShard(ctx, key, shard, cluster)
			if err == nil && !ownedBy(created, ws) {
				logger.V(2).Info("Logical cluster name is taken, choosing another", "logicalCluster", cluster, "shard", shard.Name)
				rejected = cluster
				continue
			}
			if isLogicalClusterNotFound(err) {
				// Deleted in between: create it again.
				continue
			}
			if err == nil {
				logger.V(2).Info("Adopting existing logical cluster", "logicalCluster", cluster, "shard", shard.Name)
			}
		}
		switch {
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			_, werr := r.unschedulable(ctx, key, ws, 0, "creating logical cluster %s on shard %s: %v", cluster, shard.Name, err)
			return reconciler.Result{}, errors.Join(reconciler.TerminalError(err), werr)
		case err != nil:
			return r.unavailable(ctx, key, ws, "creating logical cluster %s on shard %s: %v", cluster, shard.Name, err)
		}
		r.noteRead(key, shard, created)
		return r.scheduled(ctx, key, ws, cluster, shard, info, created)
	}
	return reconciler.Result{}, fmt.Errorf("no free logical cluster name found in %d attempts", maxScheduleAttempts)
}

// parentInfo returns what a child of ws's parent inherits. A result or an
// error ends the reconcile.
func (r *workspaceReconciler) parentInfo(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace) (parentInfo, *reconciler.Result, error) {
	parent, err := r.readParent(ctx, key.Cluster, ws.ResourceVersion)
	switch {
	case apierrors.IsNotFound(err) && key.Cluster == logicalcluster.Root:
		return parentInfoFrom(key.Cluster, nil), nil, nil
	case err != nil:
		return parentInfo{}, nil, fmt.Errorf("getting LogicalCluster of parent %s: %w", key.Cluster, err)
	case parent.DeletionTimestamp != nil:
		res, err := r.unschedulable(ctx, key, ws, unschedulableRetry, "the parent logical cluster %s is being deleted", key.Cluster)
		return parentInfo{}, &res, err
	}
	return parentInfoFrom(key.Cluster, parent), nil, nil
}

// ensureChoice makes ws carry the finalizer and a choice of logical cluster
// name and shard, and returns them. It keeps a choice persisted earlier,
// unless it is rejected or its shard is gone. A nil ws (with no error)
// means the Workspace is gone; a result or an error ends the reconcile.
func (r *workspaceReconciler) ensureChoice(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, rejected logicalcluster.Name) (*tenancyv1alpha1.Workspace, logicalcluster.Name, *corev1alpha1.Shard, *reconciler.Result, error) {
	for range maxConflictRetries {
		cluster := chosenCluster(ctx, ws)
		if cluster != "" && cluster != rejected {
			shard, err := r.getShard(ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey])
			switch {
			case err == nil:
				if !hasFinalizer(ws) {
					updated, err := r.updateWorkspace(ctx, key, ws, addFinalizer)
					if err != nil || updated == nil {
						return nil, "", nil, nil, err
					}
					ws = updated
				}
				return ws, cluster, shard, nil, nil
			case !apierrors.IsNotFound(err):
				return nil, "", nil, nil, fmt.Errorf("getting shard: %w", err)
			}
			klog.FromContext(ctx).Info("Shard of the chosen logical cluster is gone, choosing again", "logicalCluster", cluster, "shard", ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey])
		}

		shards, err := r.listShards()
		if err != nil {
			return nil, "", nil, nil, fmt.Errorf("listing shards: %w", err)
		}
		matching, err := matchingShards(shards, selectorOf(ws))
		if err != nil {
			res, err := r.unschedulable(ctx, key, ws, 0, "%v", err)
			return nil, "", nil, &res, err
		}
		name := r.newName()
		shard := chooseShard(name, matching)
		if shard == nil {
			msg := "no shard matches spec.location.selector"
			if len(shards) == 0 {
				msg = "there are no shards"
			}
			res, err := r.unschedulable(ctx, key, ws, unschedulableRetry, "%s", msg)
			return nil, "", nil, &res, err
		}
		previous := ws.Annotations[ClusterAnnotationKey]
		updated, err := r.updateWorkspace(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) bool {
			changed := addFinalizer(w)
			// A choice we did not see (stale cache) wins over a new one:
			// its LogicalCluster may exist already. A name we would not
			// have chosen is replaced.
			if current := w.Annotations[ClusterAnnotationKey]; current == previous || !isGeneratedClusterName(current) {
				if w.Annotations == nil {
					w.Annotations = map[string]string{}
				}
				w.Annotations[ClusterAnnotationKey] = name.String()
				w.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey] = shard.Name
				changed = true
			}
			return changed
		})
		if err != nil || updated == nil {
			return nil, "", nil, nil, err
		}
		ws = updated
		if ws.Annotations[ClusterAnnotationKey] == name.String() {
			return ws, name, shard, nil, nil
		}
		// Another choice was persisted meanwhile: resolve that one.
		rejected = ""
	}
	return nil, "", nil, nil, fmt.Errorf("the scheduling choice of workspace %s keeps changing", ws.Name)
}

// scheduled records in ws that its logical cluster cluster exists on shard
// as lc: spec.cluster and spec.URL, then the mirrored status.
func (r *workspaceReconciler) scheduled(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, cluster logicalcluster.Name, shard *corev1alpha1.Shard, info parentInfo, lc *corev1alpha1.LogicalCluster) (reconciler.Result, error) {
	url := workspaceURL(shard, info.path.Join(ws.Name))
	updated, err := r.updateWorkspace(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) bool {
		if w.Spec.Cluster != "" {
			return false
		}
		w.Spec.Cluster = cluster.String()
		w.Spec.URL = url
		if w.Annotations == nil {
			w.Annotations = map[string]string{}
		}
		w.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey] = shard.Name
		return true
	})
	if err != nil || updated == nil {
		return reconciler.Result{}, err
	}
	klog.FromContext(ctx).Info("Scheduled workspace", "logicalCluster", updated.Spec.Cluster, "shard", shard.Name, "url", updated.Spec.URL)
	return r.mirror(ctx, key, updated, lc)
}

// follow mirrors the logical cluster of a scheduled Workspace into its
// status, polling with backoff until it is Ready.
func (r *workspaceReconciler) follow(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace) (reconciler.Result, error) {
	if r.settled(key, ws) {
		r.backoff.reset(key)
		return reconciler.Result{}, nil
	}
	shard, err := r.shardOf(ws)
	if apierrors.IsNotFound(err) {
		// Not a reason to delete anything: the Shard may come back.
		return r.unavailable(ctx, key, ws, "shard %q of the logical cluster is unknown", r.shardName(ws))
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting shard: %w", err)
	}
	cluster := logicalcluster.Name(ws.Spec.Cluster)
	if lc, ok := r.cachedLogicalCluster(key, ws); ok {
		return r.mirror(ctx, key, ws, lc)
	}
	// Another shard's, or the informer does not show it (yet): only the
	// shard can tell whether it is gone.
	lc, err := r.getFromShard(ctx, key, shard, cluster)
	switch {
	case isLogicalClusterNotFound(err):
		// The shard says the LogicalCluster it should have is gone: the
		// owner of a LogicalCluster goes with it (see
		// LogicalClusterSpec.Owner).
		klog.FromContext(ctx).Info("Logical cluster is gone, deleting its workspace", "logicalCluster", cluster, "shard", shard.Name)
		if err := r.workspaces.Delete(ctx, key.Cluster, ws.Name, ws.UID); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return reconciler.Result{}, fmt.Errorf("deleting workspace: %w", err)
		}
		return reconciler.Result{}, nil
	case err != nil:
		return r.unavailable(ctx, key, ws, "getting logical cluster %s from shard %s: %v", cluster, shard.Name, err)
	case !ownedBy(lc, ws):
		return r.unavailable(ctx, key, ws, "logical cluster %s on shard %s belongs to another owner", cluster, shard.Name)
	}
	return r.mirror(ctx, key, ws, lc)
}

// settled tells whether ws is Ready and there is no reason to read its
// LogicalCluster again: it lives on another shard (which is not polled once
// Ready), or on this shard, where the informer shows it Ready as well. This
// keeps a restart, or any update of a Ready Workspace, from reading every
// logical cluster anew; a change of a local LogicalCluster is still seen
// through its events.
func (r *workspaceReconciler) settled(key reconciler.Key, ws *tenancyv1alpha1.Workspace) bool {
	if ws.Status.Phase != corev1alpha1.LogicalClusterPhaseReady || !conditionsv1alpha1.IsTrue(ws, tenancyv1alpha1.WorkspaceScheduled) {
		return false
	}
	if r.shardName(ws) != r.localShard {
		return true
	}
	lc, ok := r.cachedLogicalCluster(key, ws)
	return ok && lc.DeletionTimestamp == nil && lc.Status.Phase == corev1alpha1.LogicalClusterPhaseReady
}

// cachedLogicalCluster returns the LogicalCluster of ws from the informer,
// if it lives on this shard and the informer shows it owned by ws and not
// older than any copy the controller got from the server. Otherwise the
// caller asks the shard: a LogicalCluster the informer does not show (it
// may lag behind a create) is never taken for gone.
//
// The status of ws never goes back to an older state of its LogicalCluster
// this way. It mirrors what the controller last saw of it: the response to
// its create or to a GET, or a copy of the informer. The informer shows the
// versions of the LogicalCluster in the order of the shard's etcd, and
// every response of the server is noted in r.read until the informer has
// caught up with it (nothing of the informer is used before). The note
// lasts versionTTL at most: an informer lagging longer than that might show
// an older state once, which its next event corrects.
func (r *workspaceReconciler) cachedLogicalCluster(key reconciler.Key, ws *tenancyv1alpha1.Workspace) (*corev1alpha1.LogicalCluster, bool) {
	if r.shardName(ws) != r.localShard {
		return nil, false
	}
	lc, err := r.getLogicalCluster(logicalcluster.Name(ws.Spec.Cluster))
	if err != nil || !ownedBy(lc, ws) {
		return nil, false
	}
	if _, newer := r.read.newer(key, lc.ResourceVersion); newer {
		return nil, false
	}
	return lc, true
}

// getFromShard reads the LogicalCluster of cluster with a GET from shard,
// noting what it got (see cachedLogicalCluster).
func (r *workspaceReconciler) getFromShard(ctx context.Context, key reconciler.Key, shard *corev1alpha1.Shard, cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
	lc, err := r.logicalClusters.Get(ctx, shard, cluster)
	if err == nil {
		r.noteRead(key, shard, lc)
	}
	return lc, err
}

// noteRead notes lc, got from shard, if it is a LogicalCluster of this
// shard (see cachedLogicalCluster).
func (r *workspaceReconciler) noteRead(key reconciler.Key, shard *corev1alpha1.Shard, lc *corev1alpha1.LogicalCluster) {
	if shard.Name == r.localShard {
		r.read.note(key, lc.ResourceVersion)
	}
}

// mirror writes the state of lc into the status of ws (the registry keeps
// the phase label in step), and requeues with backoff until lc is Ready.
func (r *workspaceReconciler) mirror(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, lc *corev1alpha1.LogicalCluster) (reconciler.Result, error) {
	before := ws.Status.DeepCopy()
	wasUnavailable := isUnavailable(ws)
	updated, err := r.updateStatus(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) { mirrorStatus(w, lc) })
	if err != nil || updated == nil {
		return reconciler.Result{}, err
	}
	ws = updated
	if lc.Status.Phase == corev1alpha1.LogicalClusterPhaseReady {
		r.backoff.reset(key)
		return reconciler.Result{}, nil
	}
	if wasUnavailable || !apiequality.Semantic.DeepEqual(before.Initializers, ws.Status.Initializers) || before.Phase != ws.Status.Phase {
		// Progress: poll eagerly again.
		r.backoff.reset(key)
	}
	return reconciler.Result{RequeueAfter: r.backoff.next(key)}, nil
}

// finalize deletes the logical cluster of a deleted Workspace, waits until
// it is gone, and then releases the Workspace.
func (r *workspaceReconciler) finalize(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	if !hasFinalizer(ws) {
		r.backoff.reset(key)
		return reconciler.Result{}, nil
	}
	cluster := logicalcluster.Name(ws.Spec.Cluster)
	if cluster == "" {
		// Maybe created, but not recorded in spec yet.
		cluster = chosenCluster(ctx, ws)
	}
	if cluster == "" {
		return r.release(ctx, key, ws)
	}
	shard, err := r.shardOf(ws)
	if apierrors.IsNotFound(err) {
		// Releasing the Workspace would orphan the logical cluster and
		// its content if the Shard comes back (or is only missing from a
		// cache): keep it until the shard tells.
		return r.unavailable(ctx, key, ws, "shard %q of logical cluster %s is unknown: the workspace is kept until the shard can tell that the logical cluster is gone (removing the finalizer %s abandons the logical cluster)",
			r.shardName(ws), cluster, corev1alpha1.LogicalClusterFinalizer)
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting shard: %w", err)
	}
	lc, err := r.logicalClusters.Get(ctx, shard, cluster)
	switch {
	case isLogicalClusterNotFound(err):
		return r.release(ctx, key, ws)
	case err != nil:
		return r.unavailable(ctx, key, ws, "getting logical cluster %s from shard %s: %v", cluster, shard.Name, err)
	case !ownedBy(lc, ws):
		// Never ours (a name taken by another owner): leave it alone.
		return r.release(ctx, key, ws)
	case lc.DeletionTimestamp == nil:
		err := r.logicalClusters.Delete(ctx, shard, cluster, lc.UID)
		switch {
		case isLogicalClusterNotFound(err):
			return r.release(ctx, key, ws)
		case apierrors.IsConflict(err):
			// The UID precondition failed: look again.
			return reconciler.Result{RequeueAfter: r.backoff.next(key)}, nil
		case err != nil:
			return r.unavailable(ctx, key, ws, "deleting logical cluster %s on shard %s: %v", cluster, shard.Name, err)
		}
		logger.Info("Deleting logical cluster of the workspace", "logicalCluster", cluster, "shard", shard.Name)
	}
	if _, err := r.updateStatus(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) {
		w.Status.Phase = workspaces.PhaseDeleting
		conditionsv1alpha1.MarkTrue(w, tenancyv1alpha1.WorkspaceScheduled)
	}); err != nil {
		return reconciler.Result{}, err
	}
	return reconciler.Result{RequeueAfter: r.backoff.next(key)}, nil
}

// release removes the finalizer from a deleted Workspace whose logical
// cluster is gone.
func (r *workspaceReconciler) release(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace) (reconciler.Result, error) {
	r.backoff.reset(key)
	updated, err := r.updateWorkspace(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) bool {
		n := len(w.Finalizers)
		w.Finalizers = slices.DeleteFunc(w.Finalizers, func(f string) bool { return f == corev1alpha1.LogicalClusterFinalizer })
		return len(w.Finalizers) != n
	})
	if err != nil {
		return reconciler.Result{}, err
	}
	if updated != nil {
		klog.FromContext(ctx).V(2).Info("Logical cluster is gone, released the workspace")
	}
	return reconciler.Result{}, nil
}

// unschedulable records why ws cannot be scheduled and retries after
// retry (zero: only on the next event).
func (r *workspaceReconciler) unschedulable(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, retry time.Duration, format string, args ...any) (reconciler.Result, error) {
	klog.FromContext(ctx).V(2).Info("Workspace cannot be scheduled", "reason", fmt.Sprintf(format, args...))
	if _, err := r.updateStatus(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) { markUnschedulable(w, format, args...) }); err != nil {
		return reconciler.Result{}, err
	}
	return reconciler.Result{RequeueAfter: retry}, nil
}

// unavailable records that the shard of ws's logical cluster cannot be
// reached, keeping the phase, and retries with a backoff that grows up to
// unavailableMaxBackoff (a Shard event retries earlier).
func (r *workspaceReconciler) unavailable(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, format string, args ...any) (reconciler.Result, error) {
	delay := r.backoff.nextUpTo(key, unavailableMaxBackoff)
	klog.FromContext(ctx).Info("Shard unavailable, retrying", "reason", fmt.Sprintf(format, args...), "after", delay)
	if _, err := r.updateStatus(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) { markUnavailable(w, format, args...) }); err != nil {
		return reconciler.Result{}, err
	}
	return reconciler.Result{RequeueAfter: delay}, nil
}

// shardName is the shard ws's logical cluster lives on: its annotation,
// or the local shard.
func (r *workspaceReconciler) shardName(ws *tenancyv1alpha1.Workspace) string {
	return shardNameOf(ws, r.localShard)
}

// shardNameOf is the shard ws's logical cluster lives on: its annotation,
// or localShard.
func shardNameOf(ws *tenancyv1alpha1.Workspace, localShard string) string {
	if s := ws.Annotations[tenancyv1alpha1.WorkspaceShardAnnotationKey]; s != "" {
		return s
	}
	return localShard
}

// chosenCluster returns the logical cluster name chosen for ws earlier,
// from its internal.tenancy.kcp.io/cluster annotation, or "". A value the
// controller would not have generated is logged and ignored: it is not a
// choice of the controller, and following it could make the controller
// adopt or delete a logical cluster that is not the Workspace's.
func chosenCluster(ctx context.Context, ws *tenancyv1alpha1.Workspace) logicalcluster.Name {
	v := ws.Annotations[ClusterAnnotationKey]
	if v == "" {
		return ""
	}
	if !isGeneratedClusterName(v) {
		const maxShown = 64
		if len(v) > maxShown {
			v = v[:maxShown] + "..."
		}
		klog.FromContext(ctx).Info("Ignoring a logical cluster name the controller did not generate", "annotation", ClusterAnnotationKey, "value", v)
		return ""
	}
	return logicalcluster.Name(v)
}

// isLogicalClusterNotFound tells whether err is a shard's answer that the
// LogicalCluster does not exist: a NotFound status of the API server
// about core.kcp.io logicalclusters "cluster". A 404 of anything else (a
// wrong baseURL, a proxy in front of the shard, a path the server does not
// serve) tells nothing about the logical cluster, and is no reason to
// delete or release a Workspace.
func isLogicalClusterNotFound(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &status) || apierrors.IsUnexpectedServerError(err) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Group == corev1alpha1.GroupName && d.Kind == logicalClustersResource.Resource && d.Name == corev1alpha1.LogicalClusterName
}

// shardOf returns the Shard of ws's logical cluster.
func (r *workspaceReconciler) shardOf(ws *tenancyv1alpha1.Workspace) (*corev1alpha1.Shard, error) {
	return r.getShard(r.shardName(ws))
}

// updateWorkspace applies mutate to a copy of ws and updates it if mutate
// reports a change. On a conflict it reads the Workspace again and applies
// mutate to that. It returns the Workspace as stored, or nil without an
// error if it is gone.
func (r *workspaceReconciler) updateWorkspace(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, mutate func(*tenancyv1alpha1.Workspace) bool) (*tenancyv1alpha1.Workspace, error) {
	return r.write(ctx, key, ws, mutate, r.workspaces.Update, "updating workspace")
}

// updateStatus is updateWorkspace for the status: mutate changes the
// status of a copy, which is written if it differs.
func (r *workspaceReconciler) updateStatus(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, mutate func(*tenancyv1alpha1.Workspace)) (*tenancyv1alpha1.Workspace, error) {
	return r.write(ctx, key, ws, func(w *tenancyv1alpha1.Workspace) bool {
		before := w.Status.DeepCopy()
		mutate(w)
		return !apiequality.Semantic.DeepEqual(*before, w.Status)
	}, r.workspaces.UpdateStatus, "updating workspace status")
}

func (r *workspaceReconciler) write(ctx context.Context, key reconciler.Key, ws *tenancyv1alpha1.Workspace, mutate func(*tenancyv1alpha1.Workspace) bool,
	write func(context.Context, logicalcluster.Name, *tenancyv1alpha1.Workspace) (*tenancyv1alpha1.Workspace, error), what string) (*tenancyv1alpha1.Workspace, error) {
	current := ws
	for i := 0; ; i++ {
		next := current.DeepCopy()
		if !mutate(next) {
			return current, nil
		}
		updated, err := write(ctx, key.Cluster, next)
		switch {
		case err == nil:
			r.written.note(key, updated.ResourceVersion)
			return updated, nil
		case apierrors.IsNotFound(err):
			return nil, nil
		case !apierrors.IsConflict(err) || i >= maxConflictRetries:
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		fresh, err := r.workspaces.Get(ctx, key.Cluster, ws.Name)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("%s: reading it again after a conflict: %w", what, err)
		case fresh.UID != ws.UID:
			return nil, nil
		}
		r.written.note(key, fresh.ResourceVersion)
		current = fresh
	}
}

func hasFinalizer(ws *tenancyv1alpha1.Workspace) bool {
	return slices.Contains(ws.Finalizers, corev1alpha1.LogicalClusterFinalizer)
}

func addFinalizer(ws *tenancyv1alpha1.Workspace) bool {
	if hasFinalizer(ws) {
		return false
	}
	ws.Finalizers = append(ws.Finalizers, corev1alpha1.LogicalClusterFinalizer)
	return true
}

// selectorOf returns spec.location.selector of ws, or nil.
func selectorOf(ws *tenancyv1alpha1.Workspace) *metav1.LabelSelector {
	if ws.Spec.Location == nil {
		return nil
	}
	return ws.Spec.Location.Selector
}

func deref(res *reconciler.Result) reconciler.Result {
	if res == nil {
		return reconciler.Result{}
	}
	return *res
}
