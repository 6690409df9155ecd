package logicalclusterdeletion

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
)

func TestPatches(t *testing.T) {
	old := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{
		Name: "cluster", UID: "u", ResourceVersion: "3", Finalizers: []string{"a", Finalizer},
	}}

	same := old.DeepCopy()
	if p, err := finalizersPatch(old, same); err != nil || p != nil {
		t.Errorf("finalizersPatch of equal finalizers = %s, %v", p, err)
	}
	if p, err := statusPatch(old, same); err != nil || p != nil {
		t.Errorf("statusPatch of equal conditions = %s, %v", p, err)
	}

	oneLeft := old.DeepCopy()
	oneLeft.Finalizers = []string{"a"}
	p, err := finalizersPatch(old, oneLeft)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"metadata":{"finalizers":["a"],"resourceVersion":"3","uid":"u"}}`; string(p) != want {
		t.Errorf("finalizersPatch = %s, want %s", p, want)
	}

	none := old.DeepCopy()
	none.Finalizers = nil
	if p, _ := finalizersPatch(old, none); string(p) != `{"metadata":{"finalizers":null,"resourceVersion":"3","uid":"u"}}` {
		t.Errorf("finalizersPatch removing all = %s", p)
	}

	withCondition := old.DeepCopy()
	conditionsv1alpha1.Set(withCondition, &conditionsv1alpha1.Condition{
		Type: corev1alpha1.WorkspaceContentDeleted, Status: "True", LastTransitionTime: metav1.Unix(0, 0).Rfc3339Copy(),
	})
	p, err = statusPatch(old, withCondition)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"metadata":{"resourceVersion":"3","uid":"u"},"status":{"conditions":[{"type":"WorkspaceContentDeleted","status":"True","lastTransitionTime":"1970-01-01T00:00:00Z"}]}}`; string(p) != want {
		t.Errorf("statusPatch = %s, want %s", p, want)
	}
}
