package informers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestStripManagedFields(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	out, err := StripManagedFields(cm)
	if err != nil || out.(*corev1.ConfigMap).ManagedFields != nil {
		t.Errorf("managedFields kept: %v %v", out, err)
	}
	tomb := cache.DeletedFinalStateUnknown{Key: "k", Obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}}
	out, err = StripManagedFields(tomb)
	if err != nil || out.(cache.DeletedFinalStateUnknown).Obj.(*corev1.ConfigMap).ManagedFields != nil || out.(cache.DeletedFinalStateUnknown).Key != "k" {
		t.Errorf("tombstone: %v %v", out, err)
	}
}
