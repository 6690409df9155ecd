package syncer

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// TestDownstreamVolumeName: the expected value was computed apart from
// this code, in Python: "kcp-pv-" + base36(sha224(json))[:12] of
// {"syncTarget":{"cluster":"root:compute","name":"kind","uid":"0a1b2c3d"},"cluster":"2x8wo5bj4mvjn3kq","name":"pvc-0001"}.
func TestDownstreamVolumeName(t *testing.T) {
	if got := DownstreamVolumeName(testLocator.SyncTarget, testLocator.Cluster, "pvc-0001"); got != "kcp-pv-2jlp94bc6cir" {
		t.Errorf("DownstreamVolumeName = %q", got)
	}
	s := &Syncer{Cluster: "root:compute", Name: "kind", UID: "0a1b2c3d", Key: "k"}
	up := &unstructured.Unstructured{}
	up.SetName("pvc-0001")
	up.SetAnnotations(map[string]string{logicalcluster.AnnotationKey: testLocator.Cluster})
	if got := s.downstreamVolumeName(up); got != "kcp-pv-2jlp94bc6cir" {
		t.Errorf("on another SyncTarget than the provisioner: %q", got)
	}
	up.SetAnnotations(map[string]string{logicalcluster.AnnotationKey: testLocator.Cluster, workloadv1alpha1.VolumeProvisionedByAnnotationKey: "k"})
	if got := s.downstreamVolumeName(up); got != "pvc-0001" {
		t.Errorf("on the provisioner: %q", got)
	}
}

func TestReportsVolumeStatus(t *testing.T) {
	const state, deletion = workloadv1alpha1.ClusterResourceStateLabelPrefix, workloadv1alpha1.InternalClusterDeletionTimestampAnnotationPrefix
	pv := func(labels, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		return u
	}
	both := map[string]string{state + "a": "Sync", state + "b": "Sync"}
	for _, tc := range []struct {
		name string
		pv   *unstructured.Unstructured
		key  string
		want bool
	}{
		{"the provisioner", pv(both, map[string]string{workloadv1alpha1.VolumeProvisionedByAnnotationKey: "b"}), "b", true},
		{"not another while the provisioner holds it", pv(both, map[string]string{workloadv1alpha1.VolumeProvisionedByAnnotationKey: "b"}), "a", false},
		{"the first holder once the provisioner let go", pv(both, map[string]string{workloadv1alpha1.VolumeProvisionedByAnnotationKey: "p"}), "a", true},
		{"not one letting go", pv(both, map[string]string{deletion + "a": "2026-11-29T09:00:00Z"}), "a", false},
		{"the holder left", pv(both, map[string]string{deletion + "a": "2026-11-29T09:00:00Z"}), "b", true},
		{"not while upsyncing", pv(map[string]string{state + "a": "Upsync"}, nil), "a", false},
	} {
		if got := (&Syncer{Key: tc.key}).reportsVolumeStatus(tc.pv); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTransformClaim: a claim bound upstream to a volume this SyncTarget
// is not shown waits, unless the physical cluster has it already, whose
// volume name it keeps.
func TestTransformClaim(t *testing.T) {
	s := &Syncer{engines: map[string]*engine{}}
	up := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"volumeName": "pvc-0001"}}}
	desired := up.DeepCopy()
	if s.transformClaim(desired, up, nil) {
		t.Error("a new claim bound to a volume not shown is synced")
	}
	down := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"volumeName": "pvc-0001"}}}
	if !s.transformClaim(desired, up, down) || desired.Object["spec"].(map[string]any)["volumeName"] != "pvc-0001" {
		t.Errorf("a claim the physical cluster bound: %v", desired.Object)
	}
	if !s.transformClaim(desired, up, &unstructured.Unstructured{Object: map[string]any{}}) || desired.Object["spec"].(map[string]any)["volumeName"] != nil {
		t.Errorf("a claim the physical cluster did not bind: %v", desired.Object)
	}
	free := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	if !s.transformClaim(free.DeepCopy(), free, nil) {
		t.Error("an unbound claim waits")
	}
}
