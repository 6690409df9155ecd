package crdstatus

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPatch(t *testing.T) {
	base := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name: "widgets.example.com", ResourceVersion: "7", UID: "u1",
			Finalizers: []string{"a", apiextensionsv1.CustomResourceCleanupFinalizer},
			Labels:     map[string]string{"x": "y"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.com"},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{
			AcceptedNames: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ShortNames: []string{"w"}},
			Conditions: []apiextensionsv1.CustomResourceDefinitionCondition{
				{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts"},
			},
			StoredVersions: []string{"v1"},
		},
	}
	for _, tc := range []struct {
		name   string
		change func(*apiextensionsv1.CustomResourceDefinition)
		want   string
	}{
		{name: "no change", change: func(*apiextensionsv1.CustomResourceDefinition) {}},
		{
			name: "spec and labels are ignored",
			change: func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Spec.Group = "other.io"
				c.Labels = nil
			},
		},
		{
			name: "condition added",
			change: func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Status.Conditions = append(c.Status.Conditions, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue})
			},
			want: `{"metadata":{"resourceVersion":"7","uid":"u1"},"status":{"conditions":[` +
				`{"reason":"NoConflicts","status":"True","type":"NamesAccepted"},` +
				`{"status":"True","type":"Established"}]}}`,
		},
		{
			name: "removed names are nulled",
			change: func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Status.AcceptedNames.ShortNames = nil
				c.Status.AcceptedNames.Singular = "widget"
			},
			want: `{"metadata":{"resourceVersion":"7","uid":"u1"},"status":{"acceptedNames":{"shortNames":null,"singular":"widget"}}}`,
		},
		{
			name: "finalizer removed",
			change: func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Finalizers = []string{"a"}
			},
			want: `{"metadata":{"finalizers":["a"],"resourceVersion":"7","uid":"u1"}}`,
		},
		{
			name: "last finalizer removed",
			change: func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Finalizers = nil
			},
			want: `{"metadata":{"finalizers":null,"resourceVersion":"7","uid":"u1"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := base.DeepCopy()
			tc.change(changed)
			got, err := Patch(base, changed)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if got != nil {
					t.Errorf("Patch = %s, want none", got)
				}
				return
			}
			var gotObj, wantObj any
			if err := json.Unmarshal(got, &gotObj); err != nil {
				t.Fatalf("patch %s: %v", got, err)
			}
			if err := json.Unmarshal([]byte(tc.want), &wantObj); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantObj, gotObj); diff != "" {
				t.Errorf("Patch = %s, diff (-want +got):\n%s", got, diff)
			}
		})
	}
}
