package apiapproval

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestReconcile(t *testing.T) {
	crd := func(group, approval string, existing *apiextensionsv1.CustomResourceDefinitionCondition) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "things." + group, Annotations: map[string]string{logicalcluster.AnnotationKey: "a"}},
			Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: group},
		}
		if approval != "" {
			c.Annotations[apiextensionsv1.KubeAPIApprovedAnnotation] = approval
		}
		if existing != nil {
			apiextensionshelpers.SetCRDCondition(c, *existing)
		}
		return c
	}
	const pr = "https://github.com/kubernetes/kubernetes/pull/78458"
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		crd      *apiextensionsv1.CustomResourceDefinition
		patchErr error
		want     string // status/reason; empty: no write
		wantErr  error
	}{
		{name: "unprotected group", crd: crd("example.com", "", nil)},
		{name: "protected group without annotation", crd: crd("things.k8s.io", "", nil), want: "False/MissingAnnotation"},
		{name: "protected group approved", crd: crd("x.kubernetes.io", pr, nil), want: "True/ApprovedAnnotation"},
		{name: "protected group unapproved", crd: crd("k8s.io", "unapproved, experimental", nil), want: "False/UnapprovedAnnotation"},
		{name: "protected group invalid", crd: crd("k8s.io", "yes", nil), want: "False/InvalidAnnotation"},
		{
			name: "condition already right",
			crd: crd("k8s.io", pr, &apiextensionsv1.CustomResourceDefinitionCondition{
				Type: apiextensionsv1.KubernetesAPIApprovalPolicyConformant, Status: apiextensionsv1.ConditionTrue,
				Reason: "ApprovedAnnotation", Message: "approved in " + pr,
			}),
		},
		{name: "write errors are retried", crd: crd("k8s.io", pr, nil), patchErr: errBoom, want: "True/ApprovedAnnotation", wantErr: errBoom},
		{name: "deleted", crd: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var written []*apiextensionsv1.CustomResourceDefinition
			a := &approver{
				getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
					if tc.crd == nil {
						return nil, apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), name)
					}
					return tc.crd, nil
				},
				patchStatus: func(_ context.Context, _ logicalcluster.Name, old, new *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
					written = append(written, new)
					return new, tc.patchErr
				},
			}
			if _, err := a.reconcile(ctx, reconciler.Key{Cluster: "a", Name: "things"}); !errors.Is(err, tc.wantErr) {
				t.Fatalf("reconcile: err = %v, want %v", err, tc.wantErr)
			}
			if tc.want == "" {
				if len(written) != 0 {
					t.Errorf("wrote %+v, want no write", written[0].Status.Conditions)
				}
				return
			}
			if len(written) != 1 {
				t.Fatalf("%d writes, want 1", len(written))
			}
			if tc.crd.Status.Conditions != nil {
				t.Errorf("the cached object was changed")
			}
			c := apiextensionshelpers.FindCRDCondition(written[0], apiextensionsv1.KubernetesAPIApprovalPolicyConformant)
			if got := fmt.Sprintf("%s/%s", c.Status, c.Reason); got != tc.want {
				t.Errorf("condition = %s (%s), want %s", got, c.Message, tc.want)
			}
		})
	}
}
