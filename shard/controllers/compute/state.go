package compute

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
)

// SyncerFinalizerPrefix + <key> is the finalizer a syncer puts on an object
// it synced down, until the downstream copy is gone.
const SyncerFinalizerPrefix = "workload.kcp.io/syncer-"

// builtinSynced are the built-in resources synced down besides those of
// the workspace's compute bindings.
var builtinSynced = []schema.GroupVersionResource{
	corev1.SchemeGroupVersion.WithResource("configmaps"),
	corev1.SchemeGroupVersion.WithResource("secrets"),
}

// SyncedResources returns the namespaced resources whose objects follow
// their namespace's placement in a cluster with the given APIBindings: the
// built-in ConfigMaps and Secrets and every resource a compute binding
// (extra.apis.kcp.io/compute.workload.kcp.io) binds.
func SyncedResources(bindings []*apisv1alpha1.APIBinding) []schema.GroupVersionResource {
	out := slices.Clone(builtinSynced)
	for _, b := range bindings {
		if _, ok := b.Annotations[workloadv1alpha1.ComputeAPIExportAnnotationKey]; !ok {
			continue
		}
		for _, r := range b.Status.BoundResources {
			if len(r.StorageVersions) == 0 {
				continue
			}
			gvr := schema.GroupVersionResource{Group: r.Group, Version: r.StorageVersions[len(r.StorageVersions)-1], Resource: r.Resource}
			if !slices.Contains(out, gvr) {
				out = append(out, gvr)
			}
		}
	}
	return out
}

// IsSynced tells whether objects of gr follow their namespace's placement
// in a cluster with the given bindings.
func IsSynced(gr schema.GroupResource, bindings []*apisv1alpha1.APIBinding) bool {
	for _, gvr := range SyncedResources(bindings) {
		if gvr.GroupResource() == gr {
			return true
		}
	}
	return false
}

// stateKeys returns the SyncTarget keys of the state labels in lbls.
func stateKeys(lbls map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range lbls {
		if key, ok := strings.CutPrefix(k, workloadv1alpha1.ClusterResourceStateLabelPrefix); ok {
			out[key] = true
		}
	}
	return out
}

// ApplyNamespaceState makes obj's state labels and deletion annotations
// follow its namespace's, as kcp's resource controller does: a key of the
// namespace is Sync on obj (unless the namespace is already removing it);
// the namespace's deletion time of a key is copied; a key the namespace
// dropped is removed from obj at once, or, while a syncer finalizer or a
// finalizers.workload.kcp.io/<key> annotation holds obj downstream, marked
// with a deletion time first, so that the syncer removes the downstream
// copy. It returns whether obj changed.
func ApplyNamespaceState(obj metav1.Object, ns *corev1.Namespace, now time.Time) bool {
	return applyState(obj, ns.Labels, ns.Annotations, now)
}

// applyState makes obj's state labels and deletion annotations follow
// those of a source object (labels lbls, annotations ann), as
// ApplyNamespaceState describes.
func applyState(obj metav1.Object, srcLabels, srcAnnotations map[string]string, now time.Time) bool {
	expected := stateKeys(srcLabels)
	current := stateKeys(obj.GetLabels())
	lbls, ann := obj.GetLabels(), obj.GetAnnotations()
	changed := false
	set := func(m *map[string]string, k, v string) {
		if (*m)[k] == v {
			if _, ok := (*m)[k]; ok {
				return
			}
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[k] = v
		changed = true
	}
	del := func(m map[string]string, k string) {
		if _, ok := m[k]; ok {
			delete(m, k)
			changed = true
		}
	}
	for key := range current {
		deletionKey := workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix + key
		if expected[key] {
			if t, ok := srcAnnotations[deletionKey]; ok {
				if _, marked := ann[deletionKey]; !marked {
					set(&ann, deletionKey, t)
				}
			} else {
				del(ann, deletionKey)
			}
			continue
		}
		held := slices.Contains(obj.GetFinalizers(), SyncerFinalizerPrefix+key) || ann[workloadv1alpha1.ClusterFinalizerAnnotationPrefix+key] != ""
		if held {
			if _, marked := ann[deletionKey]; !marked {
				set(&ann, deletionKey, now.UTC().Format(time.RFC3339))
			}
			continue
		}
		del(ann, deletionKey)
		del(lbls, workloadv1alpha1.ClusterResourceStateLabelPrefix+key)
	}
	for key := range expected {
		if current[key] {
			continue
		}
		if _, removing := srcAnnotations[workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix+key]; removing {
			continue
		}
		set(&lbls, workloadv1alpha1.ClusterResourceStateLabelPrefix+key, string(workloadv1alpha1.ResourceStateSync))
	}
	if changed {
		obj.SetLabels(lbls)
		obj.SetAnnotations(ann)
	}
	return changed
}
