package apibinding

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
)

func TestWithExtraAnnotations(t *testing.T) {
	b := &apisv1alpha1.APIBinding{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"mine": "1", ExtraAnnotationPrefix + "old": "x"}}}
	e := &apisv1alpha1.APIExport{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"not-extra": "2", ExtraAnnotationPrefix + "compute.workload.kcp.io": "true"}}}
	got, changed := withExtraAnnotations(b, e)
	want := map[string]string{"mine": "1", ExtraAnnotationPrefix + "compute.workload.kcp.io": "true"}
	if !changed || len(got) != len(want) || got["mine"] != "1" || got[ExtraAnnotationPrefix+"compute.workload.kcp.io"] != "true" {
		t.Errorf("withExtraAnnotations = %v, %v; want %v", got, changed, want)
	}
	b.Annotations = got
	if _, changed := withExtraAnnotations(b, e); changed {
		t.Error("unchanged annotations reported as changed")
	}
	if got, changed := withExtraAnnotations(&apisv1alpha1.APIBinding{}, &apisv1alpha1.APIExport{}); changed || got != nil {
		t.Errorf("no annotations anywhere: %v %v", got, changed)
	}
}
