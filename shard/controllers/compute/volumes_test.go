package compute

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
)

func TestFollowClaim(t *testing.T) {
	const state, deletion = workloadv1alpha1.ClusterResourceStateLabelPrefix, workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix
	pv := &unstructured.Unstructured{}
	pv.SetLabels(map[string]string{state + "p": "Upsync"})
	claim := &unstructured.Unstructured{}
	claim.SetLabels(map[string]string{state + "p": "Sync"})

	// Bound: switched to Sync, the provisioner recorded.
	if !followClaim(pv, claim, t0) || pv.GetLabels()[state+"p"] != "Sync" || pv.GetAnnotations()[workloadv1alpha1.VolumeProvisionedByAnnotationKey] != "p" {
		t.Fatalf("switched: %v %v", pv.GetLabels(), pv.GetAnnotations())
	}
	if followClaim(pv, claim, t0) {
		t.Error("nothing to change, but changed")
	}
	// The claim placed on q too: shared.
	claim.SetLabels(map[string]string{state + "p": "Sync", state + "q": "Sync"})
	if !followClaim(pv, claim, t0) || pv.GetLabels()[state+"q"] != "Sync" {
		t.Errorf("shared: %v", pv.GetLabels())
	}
	// The claim leaving p: the volume leaves p at the same time.
	claim.SetAnnotations(map[string]string{deletion + "p": "2026-11-29T09:00:00Z"})
	if !followClaim(pv, claim, t0) || pv.GetAnnotations()[deletion+"p"] != "2026-11-29T09:00:00Z" {
		t.Errorf("leaving p: %v", pv.GetAnnotations())
	}
	// p dropped while its syncer holds the volume: marked, kept.
	claim.SetLabels(map[string]string{state + "q": "Sync"})
	claim.SetAnnotations(nil)
	pv.SetFinalizers([]string{SyncerFinalizerPrefix + "p"})
	if followClaim(pv, claim, t0) || pv.GetLabels()[state+"p"] != "Sync" {
		t.Errorf("held by p's syncer: %v %v", pv.GetLabels(), pv.GetAnnotations())
	}
	pv.SetFinalizers(nil)
	if !followClaim(pv, claim, t0) || pv.GetLabels()[state+"p"] != "" || pv.GetAnnotations()[workloadv1alpha1.VolumeProvisionedByAnnotationKey] != "p" {
		t.Errorf("let go by p: %v %v", pv.GetLabels(), pv.GetAnnotations())
	}

	// A volume that was never upsynced is not the SyncTargets' to move.
	other := &unstructured.Unstructured{}
	if followClaim(other, claim, t0) || len(other.GetLabels()) > 0 {
		t.Errorf("a volume made in the workspace: %v", other.GetLabels())
	}
}

func TestReclaimOwner(t *testing.T) {
	const state, deletion = workloadv1alpha1.ClusterResourceStateLabelPrefix, workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix
	pv := func(labels, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		return u
	}
	provisioned := func(by string) map[string]string {
		return map[string]string{workloadv1alpha1.VolumeProvisionedByAnnotationKey: by}
	}
	for _, tc := range []struct {
		name string
		pv   *unstructured.Unstructured
		want string
	}{
		{"the provisioner while it holds it", pv(map[string]string{state + "b": "Sync", state + "p": "Sync"}, provisioned("p")), "p"},
		{"else the first holder", pv(map[string]string{state + "c": "Sync", state + "b": "Sync"}, provisioned("p")), "b"},
		{"not one letting go", pv(map[string]string{state + "b": "Sync", state + "c": "Sync"}, map[string]string{deletion + "b": "2026-11-29T09:00:00Z"}), "c"},
		{"the owner already chosen", pv(map[string]string{state + "b": "Sync", state + "c": "Sync"}, map[string]string{workloadv1alpha1.VolumeReclaimByAnnotationKey: "c"}), "c"},
		{"none", pv(nil, provisioned("p")), ""},
	} {
		if got := reclaimOwner(tc.pv); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
