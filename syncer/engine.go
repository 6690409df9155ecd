package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// resourceToSync is what an engine syncs: one resource, from the syncer
// virtual workspaces at urls (one per shard).
type resourceToSync struct {
	gvr  schema.GroupVersionResource
	urls []string
	// upsync: objects go up (from the upsyncer virtual workspaces at
	// urls), not down (upsync.go).
	upsync bool
}

func (r resourceToSync) id() string {
	return fmt.Sprintf("%s@%s up=%t", r.gvr, strings.Join(r.urls, ","), r.upsync)
}

// upstreamSource is one syncer virtual workspace: a wildcard informer of
// the resource and per-cluster clients for the syncer's writes.
type upstreamSource struct {
	// url is the virtual workspace URL of one shard.
	url      string
	clients  *clusters.DynamicClusterClient
	informer cache.SharedIndexInformer
}

// engine syncs one resource: objects down (spec, deletion), status up.
// Its queue holds upstream keys (cluster|namespace/name); downstream
// events map back to them through the downstream namespace's locator.
type engine struct {
	s        *Syncer
	resource resourceToSync

	upstream   []upstreamSource
	downstream cache.SharedIndexInformer
	// keysOf maps a downstream object to the keys of the queue.
	keysOf func(obj any) []reconciler.Key
	ctrl   *reconciler.Controller
	cancel context.CancelFunc
}

func (s *Syncer) newEngine(rs resourceToSync) (*engine, error) {
	e := &engine{s: s, resource: rs}
	for _, url := range rs.urls {
		cfg := rest.CopyConfig(s.upstream)
		cfg.Host = url
		cfg.APIPath = ""
		clients, err := clusters.NewDynamicForConfig(cfg)
		if err != nil {
			return nil, err
		}
		wildcard := clients.Wildcard().Resource(rs.gvr)
		lw := informers.NoWatchList(&listWatch{client: wildcard})
		informer := informers.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, informers.ClusterIndexers())
		// The syncer never reads managedFields: not kept, on either side.
		if err := informer.SetTransform(informers.StripManagedFields); err != nil {
			return nil, err
		}
		e.upstream = append(e.upstream, upstreamSource{url: url, clients: clients, informer: informer})
	}
	// Not from the downstream factory: an engine's informer stops with it.
	// What is upsynced is made downstream by others (a provisioner), so
	// it carries no label of the syncer.
	tweak := s.keyLabelSelector
	reconcile := e.reconcile
	e.keysOf = e.upstreamKeyOf
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	switch {
	case rs.upsync:
		tweak, reconcile, e.keysOf = nil, e.reconcileUpsync, e.upsyncKeyOf
	case isVolumes(rs.gvr):
		// Volumes are cluster-scoped: a downstream volume names its
		// upstream one in an annotation.
		reconcile, e.keysOf = e.reconcileVolume, volumeKeyOf
		indexers[byUpstreamVolume] = upstreamVolumeIndex
	}
	e.downstream = dynamicinformer.NewFilteredDynamicInformer(s.downstream, rs.gvr, metav1.NamespaceAll, 0, indexers, tweak).Informer()
	if err := e.downstream.SetTransform(informers.StripManagedFields); err != nil {
		return nil, err
	}
	name := "syncer-" + rs.gvr.Resource
	if rs.upsync {
		name = "upsyncer-" + rs.gvr.Resource
	}
	e.ctrl = reconciler.New(name, reconciler.Func(reconcile), reconciler.Options{Workers: s.opts.Workers})
	upstreamEvents := e.ctrl.EnqueueHandler()
	if rs.upsync {
		upstreamEvents = reconciler.EnqueueMappedHandler(e.ctrl, e.upsyncKeyOf)
	}
	for _, src := range e.upstream {
		// A shard that does not answer must not stop the syncing of the
		// others' workspaces: reconcile waits for every source only before
		// it deletes. Upsyncing decides among all of them, and waits.
		watch := e.ctrl.WatchUnsynced
		if rs.upsync {
			watch = e.ctrl.Watch
		}
		if err := watch(src.informer, upstreamEvents); err != nil {
			return nil, err
		}
	}
	if err := e.ctrl.Watch(e.downstream, reconciler.EnqueueMappedHandler(e.ctrl, e.keysOf)); err != nil {
		return nil, err
	}
	e.ctrl.WaitFor(s.namespaces.HasSynced)
	return e, nil
}

// listWatch lists and watches through a dynamic resource client.
type listWatch struct{ client dynamic.ResourceInterface }

func (l *listWatch) List(lo metav1.ListOptions) (runtime.Object, error) {
	return l.client.List(context.Background(), lo)
}

func (l *listWatch) Watch(lo metav1.ListOptions) (watch.Interface, error) {
	return l.client.Watch(context.Background(), lo)
}

func (e *engine) start(ctx context.Context) {
	ctx, e.cancel = context.WithCancel(ctx)
	for _, src := range e.upstream {
		go src.informer.RunWithContext(ctx)
	}
	go e.downstream.RunWithContext(ctx)
	go func() {
		// Once both sides are listed, every downstream object is looked
		// at: one whose upstream object is gone (deleted while the syncer
		// was away) is deleted, even if its namespace was listed after its
		// own initial event.
		syncs := []cache.InformerSynced{e.downstream.HasSynced, e.s.namespaces.HasSynced}
		for _, src := range e.upstream {
			syncs = append(syncs, src.informer.HasSynced)
		}
		if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
			return
		}
		for _, obj := range e.downstream.GetStore().List() {
			for _, key := range e.keysOf(obj) {
				e.ctrl.Enqueue(key)
			}
		}
	}()
	go func() {
		if err := e.ctrl.Run(ctx); err != nil && ctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "Syncing stopped", "resource", e.resource.gvr)
		}
	}()
	klog.FromContext(ctx).Info("Syncing", "resource", e.resource.gvr, "from", e.resource.urls)
}

// upstreamSynced tells whether every shard's virtual workspace has been
// listed.
func (e *engine) upstreamSynced() bool {
	for _, src := range e.upstream {
		if !src.informer.HasSynced() {
			return false
		}
	}
	return true
}

func (e *engine) stop() {
	if e.cancel != nil {
		e.cancel()
	}
}

// upstreamKeyOf maps a downstream object to the key of its upstream
// object, through its namespace's locator.
func (e *engine) upstreamKeyOf(obj any) []reconciler.Key {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	l, ok := e.s.locatorOf(u.GetNamespace())
	if !ok || l.SyncTarget.UID != e.s.UID || !logicalcluster.Name(l.Cluster).IsValid() {
		return nil
	}
	return []reconciler.Key{{Cluster: logicalcluster.Name(l.Cluster), Namespace: l.Namespace, Name: upstreamName(e.resource.gvr.Resource, u.GetName())}}
}

func (e *engine) locator(key reconciler.Key) NamespaceLocator {
	return NamespaceLocator{
		SyncTarget: SyncTargetLocator{Cluster: e.s.Cluster.String(), Name: e.s.Name, UID: e.s.UID},
		Cluster:    key.Cluster.String(),
		Namespace:  key.Namespace,
	}
}

// reconcile brings one object's downstream copy and upstream status in
// line:
//   - no upstream object: the downstream copy is deleted;
//   - an upstream object being deleted (or removed from the SyncTarget,
//     which the virtual workspace shows as a deletion): the downstream
//     copy is deleted, then the syncer's finalizer removed upstream;
//   - otherwise the object is applied downstream (when what would be
//     applied changed), the finalizer put upstream, and the downstream
//     status written upstream (when it differs).
func (e *engine) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	if key.Namespace == "" {
		return reconciler.Result{}, nil // cluster-scoped resources are not synced
	}
	up, src, err := e.upstreamObject(key)
	if err != nil {
		return reconciler.Result{}, err
	}
	if up != nil && skipped(up) {
		return reconciler.Result{}, nil
	}
	dsNamespace := DownstreamNamespace(e.locator(key))
	dsName := downstreamName(e.resource.gvr.Resource, key.Name)
	var down *unstructured.Unstructured
	if obj, exists, err := e.downstream.GetStore().GetByKey(dsNamespace + "/" + dsName); err != nil {
		return reconciler.Result{}, err
	} else if exists {
		down = obj.(*unstructured.Unstructured)
	}
	downstream := e.s.downstream.Resource(e.resource.gvr).Namespace(dsNamespace)

	if up == nil && !e.upstreamSynced() {
		// The object may be on a shard not listed yet: once every shard
		// is, start looks at every downstream object again.
		return reconciler.Result{}, nil
	}
	if up == nil || up.GetDeletionTimestamp() != nil {
		if down != nil {
			if down.GetDeletionTimestamp() == nil {
				uid := down.GetUID()
				err := downstream.Delete(ctx, dsName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					return reconciler.Result{}, err
				}
				klog.FromContext(ctx).V(2).Info("Deleted downstream", "resource", e.resource.gvr.Resource, "object", key.String(), "namespace", dsNamespace)
			}
			// The downstream deletion's event brings the key back.
			return reconciler.Result{}, nil
		}
		e.s.planCleaning(dsNamespace)
		if up == nil {
			return reconciler.Result{}, nil
		}
		_, err := e.setFinalizer(ctx, src, up, false)
		return reconciler.Result{}, err
	}

	desired := downstreamBody(up, e.resource.gvr.Resource, dsNamespace, e.s.Key)
	if isClaims(e.resource.gvr) && !e.s.transformClaim(desired, up, down) {
		// Its volume is not shown to this SyncTarget yet: a claim synced
		// without it would get a new volume here (the volume's event
		// brings the claim back).
		return reconciler.Result{RequeueAfter: 10 * time.Second}, nil
	}
	desired, err = withAppliedHash(desired)
	if err != nil {
		return reconciler.Result{}, err
	}
	applied := false
	if down == nil || down.GetAnnotations()[AppliedAnnotation] != desired.GetAnnotations()[AppliedAnnotation] {
		if err := e.s.ensureNamespace(ctx, e.locator(key), dsNamespace); err != nil {
			return reconciler.Result{}, err
		}
		body, err := json.Marshal(desired.Object)
		if err != nil {
			return reconciler.Result{}, err
		}
		if _, err := downstream.Patch(ctx, dsName, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)}); err != nil {
			return reconciler.Result{}, fmt.Errorf("applying %s %s downstream in %s: %w", e.resource.gvr.Resource, key.String(), dsNamespace, err)
		}
		klog.FromContext(ctx).V(2).Info("Applied downstream", "resource", e.resource.gvr.Resource, "object", key.String(), "namespace", dsNamespace)
		applied = true
	}
	// The finalizer comes after the first apply, so that the object runs
	// one round trip sooner: should the upstream object go before the
	// finalizer holds it, its copy has no source and is deleted as such.
	if !slices.Contains(up.GetFinalizers(), SyncerFinalizerPrefix+e.s.Key) {
		updated, err := e.setFinalizer(ctx, src, up, true)
		if err != nil || updated == nil {
			return reconciler.Result{}, err
		}
		up = updated
	}
	if applied {
		// The downstream event brings the key back for the status.
		return reconciler.Result{}, nil
	}
	return reconciler.Result{}, e.writeStatus(ctx, src, key, up, down)
}

// writeStatus writes the downstream object's status upstream when it
// differs; a conflict or a missing object is left to the next event.
func (e *engine) writeStatus(ctx context.Context, src upstreamSource, key reconciler.Key, up, down *unstructured.Unstructured) error {
	status, hasStatus := down.Object["status"]
	if !hasStatus || equality.Semantic.DeepEqual(status, up.Object["status"]) {
		return nil
	}
	updated := up.DeepCopy()
	updated.Object["status"] = runtime.DeepCopyJSONValue(status)
	client, err := src.clients.For(key.Cluster)
	if err != nil {
		return err
	}
	if _, err := client.Resource(e.resource.gvr).Namespace(key.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("writing the status of %s %s upstream: %w", e.resource.gvr.Resource, key.String(), err)
	}
	return nil
}

// upstreamObject returns the upstream object of key and the source that
// shows it; nil if none does.
func (e *engine) upstreamObject(key reconciler.Key) (*unstructured.Unstructured, upstreamSource, error) {
	for _, s := range e.upstream {
		obj, exists, err := s.informer.GetStore().GetByKey(key.String())
		if err != nil {
			return nil, upstreamSource{}, err
		}
		if exists {
			return obj.(*unstructured.Unstructured), s, nil
		}
	}
	return nil, upstreamSource{}, nil
}

// setFinalizer adds or removes the syncer's finalizer on the upstream
// object (the virtual workspace takes an update of the finalizers only),
// and returns the updated object; nil without an error when a newer object
// is on its way as an event.
func (e *engine) setFinalizer(ctx context.Context, src upstreamSource, up *unstructured.Unstructured, present bool) (*unstructured.Unstructured, error) {
	name := SyncerFinalizerPrefix + e.s.Key
	finalizers := up.GetFinalizers()
	if slices.Contains(finalizers, name) == present {
		return up, nil
	}
	if present {
		finalizers = append(slices.Clone(finalizers), name)
	} else {
		finalizers = slices.DeleteFunc(slices.Clone(finalizers), func(f string) bool { return f == name })
	}
	updated := up.DeepCopy()
	updated.SetFinalizers(finalizers)
	client, err := src.clients.For(logicalcluster.From(up))
	if err != nil {
		return nil, err
	}
	updated, err = client.Resource(e.resource.gvr).Namespace(up.GetNamespace()).Update(ctx, updated, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, nil
	}
	return updated, err
}

// locatorOf returns the locator of a downstream namespace of the
// SyncTarget: from the namespace informer, or, for a namespace the syncer
// has just created, from what it created it with.
func (s *Syncer) locatorOf(namespace string) (NamespaceLocator, bool) {
	if obj, exists, err := s.namespaces.GetStore().GetByKey(namespace); err == nil && exists {
		s.created.Delete(namespace)
		return LocatorOf(obj.(*unstructured.Unstructured).GetAnnotations())
	}
	if l, ok := s.created.Load(namespace); ok {
		return l.(NamespaceLocator), true
	}
	return NamespaceLocator{}, false
}

// ensureNamespace creates the downstream namespace of l, named name, when
// the namespace informer does not have it.
func (s *Syncer) ensureNamespace(ctx context.Context, l NamespaceLocator, name string) error {
	if obj, exists, err := s.namespaces.GetStore().GetByKey(name); err != nil {
		return err
	} else if exists && obj.(*unstructured.Unstructured).GetDeletionTimestamp() == nil {
		return nil
	} else if exists {
		return fmt.Errorf("downstream namespace %s is being deleted; syncing into it again once it is gone", name)
	}
	locator, err := json.Marshal(l)
	if err != nil {
		return err
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	ns.SetLabels(map[string]string{
		workloadv1alpha1.InternalDownstreamClusterLabel: s.Key,
		TenantIDLabel: TenantID(l),
	})
	ns.SetAnnotations(map[string]string{NamespaceLocatorAnnotation: string(locator)})
	// The namespace's objects may be seen before the namespace is: their
	// events find the locator here.
	s.created.Store(name, l)
	_, err = s.downstream.Resource(namespacesGVR).Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Created downstream namespace", "namespace", name, "upstream", l.Cluster+"|"+l.Namespace)
	}
	return err
}
