package syncer

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// Volumes synced down (kcp's storage design, "moving shared volumes"): a
// PersistentVolume the shard's volume coordination switched from Upsync
// to Sync for this SyncTarget goes down with its claim, so that the two
// bind only to each other in the physical cluster:
//   - its name is its upstream name on the SyncTarget that provisioned it
//     (where the volume already exists and its claim is bound to it), and
//     "kcp-pv-" and a hash of SyncTarget, workspace and name elsewhere
//     (upstream names are per workspace);
//   - spec.claimRef names the claim's downstream namespace, and keeps the
//     claim's UID where the volume is already bound to it;
//   - the claim's spec.volumeName names the downstream volume, and a claim
//     bound upstream is not synced before its volume is shown to this
//     SyncTarget, so that the physical cluster does not provision another;
//   - the reclaim policy is Retain, so that no SyncTarget releases the
//     storage while others use it or it moves, except on the one SyncTarget
//     that the coordination names to release it once its claim is deleted
//     (VolumeReclaimByAnnotationKey), where it is Delete.
//
// When the volume leaves this SyncTarget, its downstream copy is made
// Retain and deleted (the storage stays); when it is deleted upstream and
// this SyncTarget releases it, the physical cluster releases the storage
// with the downstream claim and deletes the volume itself, and only then
// does the syncer's finalizer go. Status goes up from one SyncTarget, the
// provisioner while it holds the volume.

// VolumeUpstreamAnnotation on a downstream PersistentVolume names its
// upstream volume: <cluster>|<name>.
const VolumeUpstreamAnnotation = "syncer.tessera.dev/upstream"

// byUpstreamVolume indexes downstream volumes by VolumeUpstreamAnnotation.
const byUpstreamVolume = "syncer/upstream-volume"

var (
	volumesGVR = corev1.SchemeGroupVersion.WithResource("persistentvolumes")
	claimsGVR  = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
)

func isVolumes(gvr schema.GroupVersionResource) bool {
	return gvr.GroupResource() == volumesGVR.GroupResource()
}
func isClaims(gvr schema.GroupVersionResource) bool {
	return gvr.GroupResource() == claimsGVR.GroupResource()
}

func upstreamVolumeIndex(obj any) ([]string, error) {
	if m, ok := obj.(metav1.Object); ok {
		if v := m.GetAnnotations()[VolumeUpstreamAnnotation]; v != "" {
			return []string{v}, nil
		}
	}
	return nil, nil
}

// volumeKeyOf maps a downstream volume to the key of its upstream one.
func volumeKeyOf(obj any) []reconciler.Key {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil
	}
	cluster, name, ok := strings.Cut(m.GetAnnotations()[VolumeUpstreamAnnotation], informers.ClusterSeparator)
	if !ok || !logicalcluster.Name(cluster).IsValid() || name == "" {
		return nil
	}
	return []reconciler.Key{{Cluster: logicalcluster.Name(cluster), Name: name}}
}

// DownstreamVolumeName is the name in the physical cluster of SyncTarget
// st of the volume name of workspace cluster, on a SyncTarget that did not
// provision it: "kcp-pv-" and the first 12 base-36 digits of the SHA-224
// of {syncTarget, cluster, name} in JSON.
func DownstreamVolumeName(st SyncTargetLocator, cluster, name string) string {
	b, _ := json.Marshal(struct {
		SyncTarget SyncTargetLocator `json:"syncTarget"`
		Cluster    string            `json:"cluster"`
		Name       string            `json:"name"`
	}{st, cluster, name})
	sum := sha256.Sum224(b)
	return "kcp-pv-" + base36(sum[:])[:12]
}

// downstreamVolumeName is the downstream name of the upstream volume up.
func (s *Syncer) downstreamVolumeName(up *unstructured.Unstructured) string {
	if up.GetAnnotations()[workloadv1alpha1.VolumeProvisionedByAnnotationKey] == s.Key {
		return up.GetName()
	}
	return DownstreamVolumeName(SyncTargetLocator{Cluster: s.Cluster.String(), Name: s.Name, UID: s.UID}, logicalcluster.From(up).String(), up.GetName())
}

// volumeEngine returns the running engine that syncs volumes down.
func (s *Syncer) volumeEngine() *engine {
	for _, e := range s.runningEngines() {
		if !e.resource.upsync && isVolumes(e.resource.gvr) {
			return e
		}
	}
	return nil
}

// transformClaim sets the downstream claim's spec.volumeName: the
// downstream name of its volume when the volume is shown to this
// SyncTarget, else what the downstream claim has (the physical cluster
// bound it, or the volume is still upsyncing). It tells false when the
// claim must wait for its volume.
func (s *Syncer) transformClaim(desired, up, down *unstructured.Unstructured) bool {
	volume, _, _ := unstructured.NestedString(up.Object, "spec", "volumeName")
	if volume == "" {
		return true
	}
	if e := s.volumeEngine(); e != nil {
		if pv, _, err := e.upstreamObject(reconciler.Key{Cluster: logicalcluster.From(up), Name: volume}); err == nil && pv != nil && pv.GetDeletionTimestamp() == nil {
			_ = unstructured.SetNestedField(desired.Object, s.downstreamVolumeName(pv), "spec", "volumeName")
			return true
		}
	}
	if down == nil {
		return false
	}
	if current, _, _ := unstructured.NestedString(down.Object, "spec", "volumeName"); current != "" {
		_ = unstructured.SetNestedField(desired.Object, current, "spec", "volumeName")
	} else {
		unstructured.RemoveNestedField(desired.Object, "spec", "volumeName")
	}
	return true
}

// reconcileVolume brings one volume's downstream copy and upstream status
// in line, as the comment at the top of this file describes.
func (e *engine) reconcileVolume(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	up, src, err := e.upstreamObject(key)
	if err != nil {
		return reconciler.Result{}, err
	}
	if up == nil && !e.upstreamSynced() {
		return reconciler.Result{}, nil
	}
	downstream := e.s.downstream.Resource(e.resource.gvr)
	var dsName string
	if up != nil {
		dsName = e.s.downstreamVolumeName(up)
	}
	// The downstream copies of the volume: the one of the expected name,
	// and any other (a stale name) to delete.
	var down *unstructured.Unstructured
	var stale []*unstructured.Unstructured
	objs, err := e.downstream.GetIndexer().ByIndex(byUpstreamVolume, key.String())
	if err != nil {
		return reconciler.Result{}, err
	}
	for _, o := range objs {
		if u := o.(*unstructured.Unstructured); u.GetName() == dsName {
			down = u
		} else {
			stale = append(stale, u)
		}
	}
	for _, u := range stale {
		if err := e.releaseVolume(ctx, u); err != nil {
			return reconciler.Result{}, err
		}
	}
	reclaimer := up != nil && up.GetAnnotations()[workloadv1alpha1.VolumeReclaimByAnnotationKey] == e.s.Key

	if up == nil || up.GetDeletionTimestamp() != nil {
		if down != nil {
			if reclaimer {
				// The physical cluster releases the storage once the
				// downstream claim is gone, and deletes the volume.
				return reconciler.Result{}, e.setReclaimPolicy(ctx, down, corev1.PersistentVolumeReclaimDelete)
			}
			return reconciler.Result{}, e.releaseVolume(ctx, down)
		}
		if up == nil {
			return reconciler.Result{}, nil
		}
		_, err := e.setFinalizer(ctx, src, up, false)
		return reconciler.Result{}, err
	}
	hasFinalizer := slices.Contains(up.GetFinalizers(), SyncerFinalizerPrefix+e.s.Key)
	if down == nil && reclaimer && hasFinalizer {
		// Released by the physical cluster: the volume's deletion
		// upstream comes.
		return reconciler.Result{}, nil
	}

	claimNamespace, _, _ := unstructured.NestedString(up.Object, "spec", "claimRef", "namespace")
	claimName, _, _ := unstructured.NestedString(up.Object, "spec", "claimRef", "name")
	desired := downstreamBody(up, e.resource.gvr.Resource, "", e.s.Key)
	desired.SetName(dsName)
	ann := desired.GetAnnotations()
	ann[VolumeUpstreamAnnotation] = key.String()
	desired.SetAnnotations(ann)
	unstructured.RemoveNestedField(desired.Object, "spec", "claimRef")
	if claimNamespace != "" && claimName != "" {
		ref := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": claimName,
			"namespace": DownstreamNamespace(e.locator(reconciler.Key{Cluster: key.Cluster, Namespace: claimNamespace}))}
		if err := unstructured.SetNestedMap(desired.Object, ref, "spec", "claimRef"); err != nil {
			return reconciler.Result{}, err
		}
	}
	policy := corev1.PersistentVolumeReclaimRetain
	if reclaimer {
		policy = corev1.PersistentVolumeReclaimDelete
	}
	if err := unstructured.SetNestedField(desired.Object, string(policy), "spec", "persistentVolumeReclaimPolicy"); err != nil {
		return reconciler.Result{}, err
	}
	if desired, err = withAppliedHash(desired); err != nil {
		return reconciler.Result{}, err
	}

	applied := false
	if down == nil || down.GetAnnotations()[AppliedAnnotation] != desired.GetAnnotations()[AppliedAnnotation] {
		// The claim's UID stays where the volume is bound to it already
		// (the provisioner's volume, or a copy the physical cluster bound):
		// a volume pre-bound by name only would lose its claim.
		existing := down
		if existing == nil {
			if existing, err = downstream.Get(ctx, dsName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				existing = nil
			} else if err != nil {
				return reconciler.Result{}, err
			}
		}
		if existing != nil {
			uid, _, _ := unstructured.NestedString(existing.Object, "spec", "claimRef", "uid")
			ns, _, _ := unstructured.NestedString(existing.Object, "spec", "claimRef", "namespace")
			name, _, _ := unstructured.NestedString(existing.Object, "spec", "claimRef", "name")
			wantNS, _, _ := unstructured.NestedString(desired.Object, "spec", "claimRef", "namespace")
			if uid != "" && ns == wantNS && name == claimName {
				_ = unstructured.SetNestedField(desired.Object, uid, "spec", "claimRef", "uid")
			}
		}
		body, err := json.Marshal(desired.Object)
		if err != nil {
			return reconciler.Result{}, err
		}
		if _, err := downstream.Patch(ctx, dsName, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)}); err != nil {
			return reconciler.Result{}, fmt.Errorf("applying volume %s downstream as %s: %w", key.String(), dsName, err)
		}
		klog.FromContext(ctx).V(2).Info("Applied volume downstream", "volume", key.String(), "name", dsName, "reclaimPolicy", policy)
		applied = true
	}
	if !hasFinalizer {
		updated, err := e.setFinalizer(ctx, src, up, true)
		if err != nil || updated == nil {
			return reconciler.Result{}, err
		}
		up = updated
	}
	// The claim may have waited for its volume.
	if claims := e.s.claimEngine(); claims != nil && claimNamespace != "" && claimName != "" {
		claims.ctrl.Enqueue(reconciler.Key{Cluster: key.Cluster, Namespace: claimNamespace, Name: claimName})
	}
	if applied || !e.s.reportsVolumeStatus(up) {
		return reconciler.Result{}, nil
	}
	return reconciler.Result{}, e.writeStatus(ctx, src, key, up, down)
}

// releaseVolume lets go of a downstream volume without releasing its
// storage: Retain first, then the object is deleted.
func (e *engine) releaseVolume(ctx context.Context, down *unstructured.Unstructured) error {
	if down.GetDeletionTimestamp() != nil {
		return nil
	}
	if policy, _, _ := unstructured.NestedString(down.Object, "spec", "persistentVolumeReclaimPolicy"); policy != string(corev1.PersistentVolumeReclaimRetain) {
		// The update's event brings the volume back for its deletion.
		return e.setReclaimPolicy(ctx, down, corev1.PersistentVolumeReclaimRetain)
	}
	uid := down.GetUID()
	err := e.s.downstream.Resource(e.resource.gvr).Delete(ctx, down.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Deleted a downstream volume, its storage retained", "name", down.GetName())
	return nil
}

// setReclaimPolicy sets a downstream volume's reclaim policy.
func (e *engine) setReclaimPolicy(ctx context.Context, down *unstructured.Unstructured, policy corev1.PersistentVolumeReclaimPolicy) error {
	if current, _, _ := unstructured.NestedString(down.Object, "spec", "persistentVolumeReclaimPolicy"); current == string(policy) {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"persistentVolumeReclaimPolicy":%q}}`, down.GetResourceVersion(), policy)
	_, err := e.s.downstream.Resource(e.resource.gvr).Patch(ctx, down.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: FieldManager})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // an event comes
	}
	return err
}

// claimEngine returns the running engine that syncs claims down.
func (s *Syncer) claimEngine() *engine {
	for _, e := range s.runningEngines() {
		if !e.resource.upsync && isClaims(e.resource.gvr) {
			return e
		}
	}
	return nil
}

// reportsVolumeStatus tells whether this SyncTarget writes the volume's
// status upstream: the provisioner while it holds the volume, else the
// first SyncTarget (by key) that holds it and is not letting go.
func (s *Syncer) reportsVolumeStatus(up *unstructured.Unstructured) bool {
	ann := up.GetAnnotations()
	var holding []string
	for k, v := range up.GetLabels() {
		key, ok := strings.CutPrefix(k, workloadv1alpha1.ClusterResourceStateLabelPrefix)
		if !ok || v != string(workloadv1alpha1.ResourceStateSync) {
			continue
		}
		if _, leaving := ann[workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix+key]; !leaving {
			holding = append(holding, key)
		}
	}
	if len(holding) == 0 {
		return false
	}
	if p := ann[workloadv1alpha1.VolumeProvisionedByAnnotationKey]; slices.Contains(holding, p) {
		return p == s.Key
	}
	return slices.Min(holding) == s.Key
}
