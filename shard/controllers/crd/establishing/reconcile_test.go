package establishing

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

func crd(conds map[apiextensionsv1.CustomResourceDefinitionConditionType]apiextensionsv1.ConditionStatus, opts ...func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
		Name:        "widgets.example.com",
		Annotations: map[string]string{logicalcluster.AnnotationKey: "a"},
	}}
	for t, s := range conds {
		apiextensionshelpers.SetCRDCondition(c, apiextensionsv1.CustomResourceDefinitionCondition{Type: t, Status: s})
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func webhookCABundle(b []byte) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(c *apiextensionsv1.CustomResourceDefinition) {
		c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig: &apiextensionsv1.WebhookClientConfig{CABundle: b},
			},
		}
	}
}

func TestReconcile(t *testing.T) {
	type conds = map[apiextensionsv1.CustomResourceDefinitionConditionType]apiextensionsv1.ConditionStatus
	const (
		yes = apiextensionsv1.ConditionTrue
		no  = apiextensionsv1.ConditionFalse
	)
	errBoom := errors.New("boom")
	key := reconciler.Key{Cluster: "a", Name: "widgets.example.com"}
	for _, tc := range []struct {
		name     string
		crd      *apiextensionsv1.CustomResourceDefinition
		patchErr error
		want     string // Established as status/reason; empty: no write
		wantErr  error
	}{
		{name: "accepted names establish", crd: crd(conds{apiextensionsv1.NamesAccepted: yes, apiextensionsv1.Established: no}), want: "True/InitialNamesAccepted"},
		{name: "accepted names without Established condition", crd: crd(conds{apiextensionsv1.NamesAccepted: yes}), want: "True/InitialNamesAccepted"},
		{name: "names not accepted", crd: crd(conds{apiextensionsv1.NamesAccepted: no, apiextensionsv1.Established: no})},
		{name: "no names yet", crd: crd(nil)},
		{name: "already established", crd: crd(conds{apiextensionsv1.NamesAccepted: yes, apiextensionsv1.Established: yes})},
		{name: "deleted", crd: nil},
		{
			name: "invalid conversion webhook CA bundle",
			crd:  crd(conds{apiextensionsv1.NamesAccepted: yes}, webhookCABundle([]byte("not a certificate"))),
			want: "False/InvalidCABundle",
		},
		{
			name:     "conflicts wait for the next event",
			crd:      crd(conds{apiextensionsv1.NamesAccepted: yes}),
			patchErr: apierrors.NewConflict(apiextensionsv1.Resource("customresourcedefinitions"), key.Name, errBoom),
			want:     "True/InitialNamesAccepted",
		},
		{
			name:     "other errors are retried",
			crd:      crd(conds{apiextensionsv1.NamesAccepted: yes}),
			patchErr: errBoom,
			want:     "True/InitialNamesAccepted",
			wantErr:  errBoom,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var written []*apiextensionsv1.CustomResourceDefinition
			e := &establisher{
				getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
					if tc.crd == nil || cluster != key.Cluster || name != key.Name {
						return nil, apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), name)
					}
					return tc.crd, nil
				},
				patchStatus: func(_ context.Context, cluster logicalcluster.Name, old, new *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
					if old != tc.crd {
						return nil, fmt.Errorf("patch not computed from the cached object")
					}
					written = append(written, new)
					return new, tc.patchErr
				},
			}
			before := tc.crd.DeepCopy()
			if _, err := e.reconcile(ctx, key); !errors.Is(err, tc.wantErr) {
				t.Fatalf("reconcile: err = %v, want %v", err, tc.wantErr)
			}
			if tc.crd != nil && !apiextensionshelpers.IsCRDConditionEquivalent(
				apiextensionshelpers.FindCRDCondition(before, apiextensionsv1.Established),
				apiextensionshelpers.FindCRDCondition(tc.crd, apiextensionsv1.Established)) {
				t.Errorf("the cached object was changed")
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
			c := apiextensionshelpers.FindCRDCondition(written[0], apiextensionsv1.Established)
			if got := fmt.Sprintf("%s/%s", c.Status, c.Reason); got != tc.want {
				t.Errorf("Established = %s, want %s", got, tc.want)
			}
		})
	}
}
