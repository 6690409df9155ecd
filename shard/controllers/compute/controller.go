package compute

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/logicalcluster/paths"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/apibinding"
)

// The exports whose resources the controllers follow, in root.
const (
	workloadExport   = "workload.kcp.io"
	schedulingExport = "scheduling.kcp.io"
)

var (
	syncTargetsGVR = workloadv1alpha1.SchemeGroupVersion.WithResource("synctargets")
	locationsGVR   = schedulingv1alpha1.SchemeGroupVersion.WithResource("locations")
	placementsGVR  = schedulingv1alpha1.SchemeGroupVersion.WithResource("placements")
)

// Config is what the controllers need.
type Config struct {
	// Factory is the shard's informer factory (namespaces, bindings, and
	// the wildcard informers of the compute resources).
	Factory *informers.SharedInformerFactory
	// Exports finds root's APIExports (with the cache's replicas on a
	// shard that does not host root).
	Exports *informers.Informer[*apisv1alpha1.APIExport]
	// Schemas finds the APIResourceSchemas of the exports a SyncTarget
	// supports.
	Schemas *informers.Informer[*apisv1alpha1.APIResourceSchema]
	// Shards are root's Shards, for the virtual workspace URLs.
	Shards *informers.Informer[*corev1alpha1.Shard]
	// Dynamic, Kube and KCP write objects in a logical cluster.
	Dynamic *clusters.DynamicClusterClient
	Kube    *clusters.ClusterClientset
	KCP     *clusters.KCPClusterClientset
	// ResolvePath maps a workspace path or cluster name to its cluster;
	// PathOf returns the canonical path of a cluster, "" if unknown.
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	PathOf      func(logicalcluster.Name) string
	// Replicas are the cache server's informers of every shard's
	// replicas, where Placements find the SyncTargets and Locations of
	// logical clusters on other shards; OwnReplica tells a replica of this
	// shard's own object, read locally instead. Nil: this shard's only.
	Replicas   *informers.SharedInformerFactory
	OwnReplica func(obj any) bool
	// Replicate has the shard's SyncTargets and Locations replicated to
	// the cache from the given informers; nil replicates nothing.
	Replicate func(resource string, local cache.SharedIndexInformer) error
	// HeartbeatThreshold defaults to DefaultHeartbeatThreshold.
	HeartbeatThreshold time.Duration
}

// Controller runs the compute controllers once root's compute exports
// have identities.
type Controller struct {
	cfg Config

	namespaces informers.Informer[*corev1.Namespace]
	bindings   informers.Informer[*apisv1alpha1.APIBinding]

	// Set in Run, once the identities are known. localSyncTargets and
	// localLocations are the shard's own; syncTargets and locations add
	// the replicas of other shards' (the same informers without a cache).
	localSyncTargets, localLocations informers.Informer[*unstructured.Unstructured]
	// remoteLocations are the replicas of other shards' Locations (with
	// Config.Replicas only).
	remoteLocations                    informers.Informer[*unstructured.Unstructured]
	syncTargets, locations, placements informers.Informer[*unstructured.Unstructured]

	now  func() time.Time
	pick func(int) int
}

// New wires the controllers; Run starts them.
func New(cfg Config) *Controller {
	if cfg.HeartbeatThreshold <= 0 {
		cfg.HeartbeatThreshold = DefaultHeartbeatThreshold
	}
	return &Controller{
		cfg:        cfg,
		namespaces: cfg.Factory.Namespaces(),
		bindings:   cfg.Factory.APIBindings(),
		now:        time.Now,
		pick:       randomPick,
	}
}

// Name names the controller in logs.
func (c *Controller) Name() string { return "compute" }

// Run waits until a logical cluster of the shard binds root's
// workload.kcp.io or scheduling.kcp.io and both have identities, then
// starts the informers of their resources and runs the controllers until
// ctx is done. A shard on which no workspace uses compute runs none of it.
func (c *Controller) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("compute")
	ctx = klog.NewContext(ctx, logger)
	var workloadID, schedulingID string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		if !c.computeBound() {
			return false, nil
		}
		workloadID, schedulingID = c.identity(workloadExport), c.identity(schedulingExport)
		return workloadID != "" && schedulingID != "", nil
	})
	if err != nil {
		return nil
	}
	withIdentity := func(gvr schema.GroupVersionResource, id string) schema.GroupVersionResource {
		gvr.Resource += ":" + id
		return gvr
	}
	c.localSyncTargets = c.cfg.Factory.ForResource(withIdentity(syncTargetsGVR, workloadID))
	c.localLocations = c.cfg.Factory.ForResource(withIdentity(locationsGVR, schedulingID))
	c.syncTargets, c.locations = c.localSyncTargets, c.localLocations
	c.placements = c.cfg.Factory.ForResource(withIdentity(placementsGVR, schedulingID))
	if err := c.placements.Informer().AddIndexers(cache.Indexers{byLocationWorkspace: c.locationWorkspaceIndex, bySelectedWorkspace: selectedWorkspaceIndex}); err != nil {
		return err
	}
	synced := []cache.InformerSynced{c.localSyncTargets.Informer().HasSynced, c.localLocations.Informer().HasSynced}
	if c.cfg.Replicas != nil {
		// Replicas are stored without the identity: only root's export's
		// objects are replicated.
		remoteSyncTargets, remoteLocations := c.cfg.Replicas.ForResource(syncTargetsGVR), c.cfg.Replicas.ForResource(locationsGVR)
		// A location workspace on another shard is found by the path of
		// its Locations.
		if err := remoteLocations.Informer().AddIndexers(cache.Indexers{paths.ByPath: paths.ReplicaIndex}); err != nil {
			return err
		}
		c.remoteLocations = remoteLocations
		c.syncTargets = informers.NewUnion(c.localSyncTargets, remoteSyncTargets, syncTargetsGVR.GroupResource(), c.cfg.OwnReplica)
		c.locations = informers.NewUnion(c.localLocations, remoteLocations, locationsGVR.GroupResource(), c.cfg.OwnReplica)
		synced = append(synced, remoteSyncTargets.Informer().HasSynced, remoteLocations.Informer().HasSynced)
		c.cfg.Replicas.Start(ctx)
	}
	if c.cfg.Replicate != nil {
		if err := c.cfg.Replicate(syncTargetsGVR.Resource, c.localSyncTargets.Informer()); err != nil {
			return err
		}
		if err := c.cfg.Replicate(locationsGVR.Resource, c.localLocations.Informer()); err != nil {
			return err
		}
	}
	c.cfg.Factory.Start(ctx)
	// A Placement decided before the other shards' SyncTargets are known
	// would evict namespaces from them.
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}

	controllers, err := c.controllers(ctx)
	if err != nil {
		return err
	}
	logger.Info("Starting the compute controllers", "workload.kcp.io", workloadID, "scheduling.kcp.io", schedulingID)
	errs := make(chan error, len(controllers))
	for _, rc := range controllers {
		go func() { errs <- rc.Run(ctx) }()
	}
	var first error
	for range controllers {
		if err := <-errs; err != nil && first == nil && ctx.Err() == nil {
			first = err
		}
	}
	return first
}

// computeBound tells whether a binding of the shard is bound to root's
// workload.kcp.io or scheduling.kcp.io (an index lookup).
func (c *Controller) computeBound() bool {
	for _, name := range []string{workloadExport, schedulingExport} {
		objs, err := c.bindings.Informer().GetIndexer().ByIndex(apibinding.ByExport, apibinding.ExportKey(logicalcluster.Root, name))
		if err == nil && len(objs) > 0 {
			return true
		}
	}
	return false
}

// identity returns the identity hash of root's export name, "" until it
// has one.
func (c *Controller) identity(name string) string {
	e, err := c.cfg.Exports.Lister().Cluster(logicalcluster.Root).Get(name)
	if err != nil {
		return ""
	}
	return e.Status.IdentityHash
}

// Indexes of the placements informer.
const (
	// byLocationWorkspace: the cluster name of the workspace a Placement
	// looks for Locations in, when it resolves.
	byLocationWorkspace = "compute/location-workspace"
	// bySelectedWorkspace: the path of the selected Location's workspace.
	bySelectedWorkspace = "compute/selected-workspace"
)

func (c *Controller) locationWorkspaceIndex(obj any) ([]string, error) {
	p, err := toPlacement(obj)
	if err != nil {
		return nil, nil
	}
	if cluster, _, ok := c.locationWorkspace(p); ok {
		return []string{cluster.String()}, nil
	}
	return nil, nil
}

func selectedWorkspaceIndex(obj any) ([]string, error) {
	p, err := toPlacement(obj)
	if err != nil || p.Status.SelectedLocation == nil {
		return nil, nil
	}
	return []string{p.Status.SelectedLocation.Path}, nil
}

// locationWorkspace returns the cluster and path of the workspace p looks
// for Locations in: spec.locationWorkspace, or p's own.
func (c *Controller) locationWorkspace(p *schedulingv1alpha1.Placement) (logicalcluster.Name, string, bool) {
	own := logicalcluster.From(p)
	if p.Spec.LocationWorkspace == "" {
		if path := c.cfg.PathOf(own); path != "" {
			return own, path, true
		}
		return own, own.String(), true
	}
	cluster, ok := c.cfg.ResolvePath(logicalcluster.NewPath(p.Spec.LocationWorkspace))
	if !ok && c.cfg.Replicas != nil {
		objs, _ := c.remoteLocations.Informer().GetIndexer().ByIndex(paths.ByPath, p.Spec.LocationWorkspace)
		for _, o := range objs {
			if m, isMeta := o.(metav1.Object); isMeta && !c.cfg.OwnReplica(o) {
				return logicalcluster.From(m), p.Spec.LocationWorkspace, true
			}
		}
	}
	return cluster, p.Spec.LocationWorkspace, ok
}

// controllers builds the controllers and their event handlers.
func (c *Controller) controllers(ctx context.Context) ([]*reconciler.Controller, error) {
	st := reconciler.New("compute-synctarget", reconciler.Func(c.reconcileSyncTarget), reconciler.Options{Workers: 2})
	loc := reconciler.New("compute-location", reconciler.Func(c.reconcileLocation), reconciler.Options{Workers: 2})
	pl := reconciler.New("compute-placement", reconciler.Func(c.reconcilePlacement), reconciler.Options{Workers: 2})
	ns := reconciler.New("compute-namespace", reconciler.Func(c.reconcileNamespace), reconciler.Options{Workers: 2})
	res := reconciler.New("compute-resources", reconciler.Func(c.reconcileResources), reconciler.Options{Workers: 2})
	defLoc := reconciler.New("compute-default-location", reconciler.Func(c.reconcileDefaultLocation), reconciler.Options{Workers: 1})
	defPl := reconciler.New("compute-default-placement", reconciler.Func(c.reconcileDefaultPlacement), reconciler.Options{Workers: 1})
	vols := c.newVolumes(ctx)
	// The default Location is kept per cluster.
	byCluster := func(obj any) []reconciler.Key {
		if cluster, ok := clusterOf(obj); ok && cluster != "" {
			return []reconciler.Key{{Cluster: cluster}}
		}
		return nil
	}

	watches := []struct {
		ctrl     *reconciler.Controller
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		// SyncTargets and Locations get their status on their own shard.
		{st, c.localSyncTargets.Informer(), st.EnqueueHandler()},
		// Shards change the virtual workspace URLs of every SyncTarget.
		{st, c.cfg.Shards.Informer(), reconciler.EnqueueMappedHandler(st, func(any) []reconciler.Key { return keysOf(c.localSyncTargets.Lister().List(labels.Everything())) })},
		// Exports and their schemas make a SyncTarget's synced resources.
		{st, c.cfg.Exports.Informer(), reconciler.EnqueueMappedHandler(st, c.syncTargetsSupporting)},
		{st, c.cfg.Schemas.Informer(), reconciler.EnqueueMappedHandler(st, c.syncTargetsSupporting)},
		{loc, c.localLocations.Informer(), loc.EnqueueHandler()},
		{loc, c.localSyncTargets.Informer(), reconciler.EnqueueMappedHandler(loc, func(obj any) []reconciler.Key { return c.inCluster(c.localLocations, obj) })},
		{pl, c.placements.Informer(), pl.EnqueueHandler()},
		{pl, c.locations.Informer(), reconciler.EnqueueMappedHandler(pl, c.placementsLookingAt)},
		{pl, c.syncTargets.Informer(), reconciler.EnqueueMappedHandler(pl, c.placementsSelectingIn)},
		{pl, c.namespaces.Informer(), reconciler.EnqueueMappedHandler(pl, func(obj any) []reconciler.Key { return c.inCluster(c.placements, obj) })},
		{pl, c.bindings.Informer(), reconciler.EnqueueMappedHandler(pl, func(obj any) []reconciler.Key { return c.inCluster(c.placements, obj) })},
		{ns, c.namespaces.Informer(), cache.FilteringResourceEventHandler{FilterFunc: c.concernsNamespace, Handler: ns.EnqueueHandler()}},
		{ns, c.placements.Informer(), reconciler.EnqueueMappedHandler(ns, c.namespacesOfPlacement)},
		{res, c.namespaces.Informer(), namespaceStateHandler(res)},
		{res, c.bindings.Informer(), reconciler.EnqueueMappedHandler(res, c.placedNamespacesOf)},
		{defLoc, c.localSyncTargets.Informer(), reconciler.EnqueueMappedHandler(defLoc, byCluster)},
		{defLoc, c.localLocations.Informer(), reconciler.EnqueueMappedHandler(defLoc, byCluster)},
		// A binding to scheduling.kcp.io makes Locations servable.
		{defLoc, c.bindings.Informer(), reconciler.EnqueueMappedHandler(defLoc, byCluster)},
		{defPl, c.bindings.Informer(), cache.FilteringResourceEventHandler{FilterFunc: needsDefaultPlacementEvent, Handler: defPl.EnqueueHandler()}},
		// A binding to scheduling.kcp.io makes Placements servable: the
		// compute bindings of the cluster may get theirs.
		{defPl, c.bindings.Informer(), reconciler.EnqueueMappedHandler(defPl, c.computeBindingsOf)},
		// Compute bindings bring the volumes and claims of their export.
		{vols.ctrl, c.bindings.Informer(), vols.bindingHandler()},
	}
	for _, w := range watches {
		if err := w.ctrl.Watch(w.informer, w.handler); err != nil {
			return nil, fmt.Errorf("%s: %w", w.ctrl.Name(), err)
		}
	}
	return []*reconciler.Controller{st, loc, pl, ns, res, defLoc, defPl, vols.ctrl}, nil
}

func keysOf(objs []*unstructured.Unstructured, err error) []reconciler.Key {
	if err != nil {
		return nil
	}
	keys := make([]reconciler.Key, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(o), Name: o.GetName()})
	}
	return keys
}

// clusterOf returns the logical cluster of an informer's object.
func clusterOf(obj any) (logicalcluster.Name, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(interface{ GetAnnotations() map[string]string })
	if !ok {
		return "", false
	}
	return logicalcluster.Name(m.GetAnnotations()[logicalcluster.AnnotationKey]), true
}

// inCluster returns the keys of the objects of informer in obj's cluster.
func (c *Controller) inCluster(i informers.Informer[*unstructured.Unstructured], obj any) []reconciler.Key {
	cluster, ok := clusterOf(obj)
	if !ok || cluster == "" {
		return nil
	}
	return keysOf(i.Lister().Cluster(cluster).List(labels.Everything()))
}

// placementsLookingAt returns the Placements whose location workspace is
// the Location's cluster.
func (c *Controller) placementsLookingAt(obj any) []reconciler.Key {
	cluster, ok := clusterOf(obj)
	if !ok {
		return nil
	}
	objs, _ := c.placements.Informer().GetIndexer().ByIndex(byLocationWorkspace, cluster.String())
	return keysOfAny(objs)
}

// placementsSelectingIn returns the Placements whose selected Location is
// in the SyncTarget's cluster.
func (c *Controller) placementsSelectingIn(obj any) []reconciler.Key {
	cluster, ok := clusterOf(obj)
	if !ok {
		return nil
	}
	values := []string{cluster.String()}
	// A replica of another shard's SyncTarget carries its path.
	path := c.cfg.PathOf(cluster)
	if m, ok := obj.(interface{ GetAnnotations() map[string]string }); ok && path == "" {
		path = m.GetAnnotations()[logicalcluster.PathAnnotationKey]
	}
	if path != "" && path != cluster.String() {
		values = append(values, path)
	}
	var keys []reconciler.Key
	for _, v := range values {
		objs, _ := c.placements.Informer().GetIndexer().ByIndex(bySelectedWorkspace, v)
		keys = append(keys, keysOfAny(objs)...)
	}
	return keys
}

func keysOfAny(objs []any) []reconciler.Key {
	keys := make([]reconciler.Key, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(u), Name: u.GetName()})
		}
	}
	return keys
}

// concernsNamespace tells whether a namespace event may change anything:
// its cluster has Placements, or it carries placement state.
func (c *Controller) concernsNamespace(obj any) bool {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return false
	}
	if _, ok := ns.Annotations[schedulingv1alpha1.PlacementAnnotationKey]; ok {
		return true
	}
	if HasStateLabels(ns.Labels) {
		return true
	}
	placements, err := c.placements.Lister().Cluster(logicalcluster.From(ns)).List(labels.Everything())
	return err == nil && len(placements) > 0
}

// namespacesOfPlacement returns the namespaces of the Placement's cluster.
func (c *Controller) namespacesOfPlacement(obj any) []reconciler.Key {
	cluster, ok := clusterOf(obj)
	if !ok {
		return nil
	}
	list, err := c.namespaces.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil
	}
	keys := make([]reconciler.Key, 0, len(list))
	for _, ns := range list {
		keys = append(keys, reconciler.Key{Cluster: cluster, Name: ns.Name})
	}
	return keys
}

// Conversions from the informers' unstructured objects.

func fromUnstructured[T any](obj any) (*T, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", obj)
	}
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, err
	}
	return out, nil
}

func toPlacement(obj any) (*schedulingv1alpha1.Placement, error) {
	return fromUnstructured[schedulingv1alpha1.Placement](obj)
}

func toLocation(obj any) (*schedulingv1alpha1.Location, error) {
	return fromUnstructured[schedulingv1alpha1.Location](obj)
}

func toSyncTarget(obj any) (*workloadv1alpha1.SyncTarget, error) {
	return fromUnstructured[workloadv1alpha1.SyncTarget](obj)
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}
