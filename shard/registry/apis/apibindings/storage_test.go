package apibindings

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

func TestNewStorage(t *testing.T) {
	storages, err := NewStorage(runtime.NewScheme(), storetest.NoStorage("apis.kcp.io/apibindings"))
	if err != nil {
		t.Fatal(err)
	}
	storetest.ClusterScopedWithStatus{
		Resource:     "apibindings",
		GroupVersion: "apis.kcp.io/v1alpha1",
		Singular:     "apibinding",
		Categories:   []string{"kcp"},
		IsNew:        func(o runtime.Object) bool { _, ok := o.(*apisv1alpha1.APIBinding); return ok },
	}.Check(t, storages)
}

func TestTableConvertor(t *testing.T) {
	ready := cowboys(func(b *apisv1alpha1.APIBinding) {
		b.CreationTimestamp = metav1.NewTime(time.Now().Add(-3 * time.Hour))
		conditionsv1alpha1.MarkFalse(b, conditionsv1alpha1.ReadyCondition, apisv1alpha1.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError, "gone")
		conditionsv1alpha1.MarkTrue(b, apisv1alpha1.InitialBindingCompleted)
	})
	fresh := cowboys(func(b *apisv1alpha1.APIBinding) {
		b.Name = "fresh"
		b.CreationTimestamp = metav1.NewTime(time.Now().Add(-5 * time.Minute))
	})
	list := &apisv1alpha1.APIBindingList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []apisv1alpha1.APIBinding{*ready, *fresh}}
	storetest.Table{
		Columns:         []string{"Name:string", "Age:date", "Ready:string"},
		ResourceVersion: "9",
		Rows:            [][]interface{}{{"cowboys", "3h", string(corev1.ConditionFalse)}, {"fresh", "5m", nil}},
	}.Check(t, tableConvertor(), list)
}
