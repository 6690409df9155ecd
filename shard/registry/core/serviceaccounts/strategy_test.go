package serviceaccounts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestStrategy(t *testing.T) {
	strategy := NewStrategy(runtime.NewScheme())
	sa := newServiceAccount(func(sa *corev1.ServiceAccount) {
		sa.Secrets = []corev1.ObjectReference{{Name: "token", Namespace: "elsewhere", Kind: "Secret", UID: "u"}}
	})
	strategy.PrepareForCreate(t.Context(), sa)
	if diff := cmp.Diff([]corev1.ObjectReference{{Name: "token"}}, sa.Secrets); diff != "" {
		t.Errorf("secrets after create (-want +got):\n%s", diff)
	}
	if sa.AutomountServiceAccountToken != nil {
		t.Error("automountServiceAccountToken was set")
	}

	annotated := newServiceAccount(func(sa *corev1.ServiceAccount) {
		sa.Annotations = map[string]string{EnforceMountableSecretsAnnotation: "true"}
	})
	if w := strategy.WarningsOnCreate(t.Context(), annotated); len(w) != 1 {
		t.Errorf("warnings on create %v, want one", w)
	}
	if w := strategy.WarningsOnUpdate(t.Context(), annotated, newServiceAccount()); len(w) != 1 {
		t.Errorf("warnings when adding the annotation %v, want one", w)
	}
	if w := strategy.WarningsOnUpdate(t.Context(), annotated, annotated); len(w) != 0 {
		t.Errorf("warnings when keeping the annotation %v, want none", w)
	}
}
