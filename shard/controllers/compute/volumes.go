package compute

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// Volume coordination, as kcp's storage design describes it (the
// "coordination controller"):
//
//   - A PersistentVolume that a physical cluster provisioned for a synced
//     claim comes up in Upsync state (the syncer's upsync). Once the
//     workspace's claim is bound to it (spec.volumeName), the volume
//     switches to Sync for that SyncTarget, which is recorded as its
//     provisioner (VolumeProvisionedByAnnotationKey).
//   - From then on the volume follows its claim, as the claim follows its
//     namespace: Sync for every SyncTarget of the claim, marked for
//     deletion with it, and removed once the SyncTarget's syncer has let
//     go. A claim placed on another SyncTarget of the Location thus takes
//     its volume along: the syncer there syncs the pair down with their
//     mutual references transformed, and the volume's reclaim policy is
//     Retain in every physical cluster, so that no SyncTarget releases the
//     storage while moving or sharing it.
//   - When the claim is deleted, a volume whose reclaim policy (upstream)
//     is Delete keeps one SyncTarget as its owner (its provisioner if it
//     still holds it), loses the others, and then names the owner in
//     VolumeReclaimByAnnotationKey and is deleted: the owner's syncer sets
//     the policy Delete downstream, where the physical cluster releases the
//     storage with the claim, and removes its finalizer once the volume is
//     gone there. A volume whose policy is Retain is let go by every
//     SyncTarget (the storage stays) and stays in the workspace, Released,
//     for manual cleanup.
//
// The volumes and claims are bound resources of the compute exports; the
// controller watches them with one wildcard informer each per export
// identity (one per compute service, not per workspace).
type volumes struct {
	c    *Controller
	ctrl *reconciler.Controller
	ctx  context.Context

	mu      sync.Mutex
	sources map[string]*volumeSource // by identity
}

// volumeSource are the informers of the volumes and claims of one compute
// export.
type volumeSource struct {
	identity  string
	pvs, pvcs informers.Informer[*unstructured.Unstructured]
}

var (
	pvsGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	pvcsGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
)

func (c *Controller) newVolumes(ctx context.Context) *volumes {
	v := &volumes{c: c, ctx: ctx, sources: map[string]*volumeSource{}}
	v.ctrl = reconciler.New("compute-volumes", reconciler.Func(v.reconcile), reconciler.Options{Workers: 2})
	return v
}

// bindingHandler starts watching the volumes of the exports that compute
// bindings bind them from.
func (v *volumes) bindingHandler() cache.ResourceEventHandler {
	return reconciler.EnqueueMappedHandler(v.ctrl, func(obj any) []reconciler.Key {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		b, ok := obj.(*apisv1alpha1.APIBinding)
		if !ok {
			return nil
		}
		if _, compute := b.Annotations[workloadv1alpha1.ComputeAPIExportAnnotationKey]; !compute {
			return nil
		}
		for _, r := range b.Status.BoundResources {
			if r.Group == "" && r.Resource == pvsGVR.Resource && r.Schema.IdentityHash != "" {
				v.watch(r.Schema.IdentityHash)
			}
		}
		return nil
	})
}

// watch starts the informers of the volumes and claims of identity, once.
func (v *volumes) watch(identity string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.sources[identity]; ok {
		return
	}
	withIdentity := func(gvr schema.GroupVersionResource) schema.GroupVersionResource {
		gvr.Resource += ":" + identity
		return gvr
	}
	src := &volumeSource{identity: identity, pvs: v.c.cfg.Factory.ForResource(withIdentity(pvsGVR)), pvcs: v.c.cfg.Factory.ForResource(withIdentity(pvcsGVR))}
	// Informers that come after Run: the reconciler waits for them itself.
	if _, err := src.pvs.Informer().AddEventHandler(v.ctrl.EnqueueHandler()); err != nil {
		klog.FromContext(v.ctx).Error(err, "Watching volumes", "identity", identity)
		return
	}
	if _, err := src.pvcs.Informer().AddEventHandler(reconciler.EnqueueMappedHandler(v.ctrl, volumeOfClaim)); err != nil {
		klog.FromContext(v.ctx).Error(err, "Watching claims", "identity", identity)
		return
	}
	v.sources[identity] = src
	v.c.cfg.Factory.Start(v.ctx)
}

// volumeOfClaim maps a claim to the volume it is bound to.
func volumeOfClaim(obj any) []reconciler.Key {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	if name, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName"); name != "" {
		return []reconciler.Key{{Cluster: logicalcluster.From(u), Name: name}}
	}
	return nil
}

// find returns the volume of key and the informers it is in.
func (v *volumes) find(key reconciler.Key) (*volumeSource, *unstructured.Unstructured, bool) {
	v.mu.Lock()
	sources := make([]*volumeSource, 0, len(v.sources))
	for _, src := range v.sources {
		sources = append(sources, src)
	}
	v.mu.Unlock()
	synced := true
	for _, src := range sources {
		if !src.pvs.Informer().HasSynced() || !src.pvcs.Informer().HasSynced() {
			synced = false
			continue
		}
		if pv, err := src.pvs.Lister().Cluster(key.Cluster).Get(key.Name); err == nil {
			return src, pv, true
		}
	}
	return nil, nil, synced
}

// reconcile coordinates one volume of one logical cluster.
func (v *volumes) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	src, pv, synced := v.find(key)
	if !synced {
		// A claim not listed yet must not look deleted.
		return reconciler.Result{RequeueAfter: time.Second}, nil
	}
	if pv == nil || pv.GetDeletionTimestamp() != nil {
		return reconciler.Result{}, nil
	}
	claimNamespace, _, _ := unstructured.NestedString(pv.Object, "spec", "claimRef", "namespace")
	claimName, _, _ := unstructured.NestedString(pv.Object, "spec", "claimRef", "name")
	if claimNamespace == "" || claimName == "" {
		return reconciler.Result{}, nil
	}
	claim, err := src.pvcs.Lister().Cluster(key.Cluster).Namespace(claimNamespace).Get(claimName)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconciler.Result{}, err
	}
	client, err := v.c.cfg.Dynamic.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	resource := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: pvsGVR.Resource + ":" + src.identity})
	now := v.c.now()
	updated := pv.DeepCopy()

	if claim != nil && claim.GetDeletionTimestamp() == nil {
		if name, _, _ := unstructured.NestedString(claim.Object, "spec", "volumeName"); name != pv.GetName() {
			return reconciler.Result{}, nil // not (yet) bound to this volume
		}
		if !followClaim(updated, claim, now) {
			return reconciler.Result{}, nil
		}
		_, err := resource.Update(ctx, updated, metav1.UpdateOptions{})
		return reconciler.Result{}, ignoreConflict(ignoreNotFound(err))
	}

	// The claim is being deleted, or gone: the volume is released.
	if pv.GetAnnotations()[workloadv1alpha1.VolumeProvisionedByAnnotationKey] == "" {
		return reconciler.Result{}, nil // never switched: the upsync follows the physical cluster
	}
	policy, _, _ := unstructured.NestedString(pv.Object, "spec", "persistentVolumeReclaimPolicy")
	if policy != string(corev1.PersistentVolumeReclaimDelete) {
		// Retain: every SyncTarget lets go (the storage stays), and the
		// volume stays here, Released, for manual cleanup.
		if applyState(updated, nil, nil, now) {
			_, err := resource.Update(ctx, updated, metav1.UpdateOptions{})
			return reconciler.Result{}, ignoreConflict(ignoreNotFound(err))
		}
		if claim == nil && len(stateKeys(pv.GetLabels())) == 0 {
			return reconciler.Result{}, v.setPhase(ctx, resource, pv, corev1.VolumeReleased)
		}
		return reconciler.Result{}, nil
	}

	owner := reclaimOwner(pv)
	if owner == "" {
		// No SyncTarget holds the volume: none can release its storage.
		klog.FromContext(ctx).Info("A deleted claim's volume has reclaim policy Delete, but no SyncTarget holds it to release its storage; it stays for manual cleanup", "volume", pv.GetName())
		return reconciler.Result{}, v.setPhase(ctx, resource, pv, corev1.VolumeFailed)
	}
	only := map[string]string{workloadv1alpha1.ClusterResourceStateLabelPrefix + owner: string(workloadv1alpha1.ResourceStateSync)}
	changed := applyState(updated, only, nil, now)
	if len(stateKeys(updated.GetLabels())) > 1 {
		// The other SyncTargets let go first (their events come back).
		if changed {
			_, err := resource.Update(ctx, updated, metav1.UpdateOptions{})
			return reconciler.Result{}, ignoreConflict(ignoreNotFound(err))
		}
		return reconciler.Result{}, nil
	}
	if updated.GetAnnotations()[workloadv1alpha1.VolumeReclaimByAnnotationKey] != owner {
		ann := updated.GetAnnotations()
		ann[workloadv1alpha1.VolumeReclaimByAnnotationKey] = owner
		updated.SetAnnotations(ann)
		changed = true
	}
	if changed {
		_, err := resource.Update(ctx, updated, metav1.UpdateOptions{})
		return reconciler.Result{}, ignoreConflict(ignoreNotFound(err))
	}
	// The owner's syncer holds the volume with its finalizer until the
	// physical cluster has released the storage.
	uid := pv.GetUID()
	err = resource.Delete(ctx, pv.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil {
		klog.FromContext(ctx).V(2).Info("Deleted the volume of a deleted claim; its owner releases the storage", "volume", pv.GetName(), "owner", owner)
	}
	return reconciler.Result{}, ignoreConflict(ignoreNotFound(err))
}

// followClaim makes a volume follow its bound claim's state labels and
// deletion times, switching from Upsync to Sync, and reports a change.
func followClaim(pv, claim *unstructured.Unstructured, now time.Time) bool {
	lbls := pv.GetLabels()
	ann := pv.GetAnnotations()
	changed := false
	if ann[workloadv1alpha1.VolumeProvisionedByAnnotationKey] == "" {
		var upsynced []string
		for key := range stateKeys(lbls) {
			if lbls[workloadv1alpha1.ClusterResourceStateLabelPrefix+key] == string(workloadv1alpha1.ResourceStateUpsync) {
				upsynced = append(upsynced, key)
			}
		}
		if len(upsynced) == 0 {
			return false // not upsynced: not a volume the SyncTargets made
		}
		slices.Sort(upsynced)
		if ann == nil {
			ann = map[string]string{}
		}
		ann[workloadv1alpha1.VolumeProvisionedByAnnotationKey] = upsynced[0]
		pv.SetAnnotations(ann)
		changed = true
	}
	for key := range stateKeys(claim.GetLabels()) {
		label := workloadv1alpha1.ClusterResourceStateLabelPrefix + key
		if lbls[label] == string(workloadv1alpha1.ResourceStateUpsync) {
			lbls[label] = string(workloadv1alpha1.ResourceStateSync)
			pv.SetLabels(lbls)
			changed = true
		}
	}
	return applyState(pv, claim.GetLabels(), claim.GetAnnotations(), now) || changed
}

// reclaimOwner is the SyncTarget that releases a volume's storage: the
// one already chosen, or its provisioner while it holds it, or the first
// other that holds it and is not letting go; "" if none holds it.
func reclaimOwner(pv *unstructured.Unstructured) string {
	keys := stateKeys(pv.GetLabels())
	ann := pv.GetAnnotations()
	if o := ann[workloadv1alpha1.VolumeReclaimByAnnotationKey]; o != "" && keys[o] {
		return o
	}
	holding := func(key string) bool {
		_, leaving := ann[workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix+key]
		return keys[key] && !leaving
	}
	if p := ann[workloadv1alpha1.VolumeProvisionedByAnnotationKey]; holding(p) {
		return p
	}
	var candidates []string
	for key := range keys {
		if holding(key) {
			candidates = append(candidates, key)
		}
	}
	if len(candidates) == 0 {
		return ""
	}
	return slices.Min(candidates)
}

// setPhase sets a released volume's status.phase.
func (v *volumes) setPhase(ctx context.Context, resource interface {
	UpdateStatus(context.Context, *unstructured.Unstructured, metav1.UpdateOptions) (*unstructured.Unstructured, error)
}, pv *unstructured.Unstructured, phase corev1.PersistentVolumePhase) error {
	if current, _, _ := unstructured.NestedString(pv.Object, "status", "phase"); current == string(phase) {
		return nil
	}
	updated := pv.DeepCopy()
	if err := unstructured.SetNestedField(updated.Object, string(phase), "status", "phase"); err != nil {
		return err
	}
	_, err := resource.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return ignoreConflict(ignoreNotFound(err))
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
