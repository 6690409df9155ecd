package resourcequota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// TestLowerCountsNeedASecondCount: a count below status.used is written
// only when the next count agrees (an admitted object may not be stored
// yet when the first one runs); higher or equal counts go at once.
func TestLowerCountsNeedASecondCount(t *testing.T) {
	two := corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("2")}
	one := corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("1")}
	if !lowers(one, two) || lowers(two, one) || lowers(two, two) {
		t.Fatal("lowers compares wrongly")
	}
	r := &recounter{}
	k := reconciler.Key{Cluster: "a", Namespace: "ns", Name: "q"}
	if r.confirmLower(k, true) {
		t.Error("a first lower count is confirmed")
	}
	if !r.confirmLower(k, true) {
		t.Error("a second lower count is not confirmed")
	}
	if r.confirmLower(k, true) {
		t.Error("a confirmation is used twice")
	}
	if r.confirmLower(k, false) {
		t.Error("a count that is not lower clears nothing")
	}
	if r.confirmLower(k, true) {
		t.Error("a lower count after one that was not lower is confirmed at once")
	}
}
