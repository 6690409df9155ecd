package partitionsets

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

// cloudRegion is the PartitionSet of kcp's documentation: partitions by
// region and cloud, outside Antarctica and Greenland.
func cloudRegion(change ...func(*topologyv1alpha1.PartitionSet)) *topologyv1alpha1.PartitionSet {
	s := &topologyv1alpha1.PartitionSet{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud-region", ResourceVersion: "1"},
		Spec: topologyv1alpha1.PartitionSetSpec{
			Dimensions: []string{"region", "cloud"},
			ShardSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "region", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"Antarctica", "Greenland"}},
			}},
		},
	}
	for _, c := range change {
		c(s)
	}
	return s
}

func TestValidate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	selector := func(sel *metav1.LabelSelector) func(*topologyv1alpha1.PartitionSet) {
		return func(s *topologyv1alpha1.PartitionSet) { s.Spec.ShardSelector = sel }
	}
	many := func(n int) (map[string]string, []metav1.LabelSelectorRequirement) {
		labels := map[string]string{}
		var exprs []metav1.LabelSelectorRequirement
		for i := range n {
			labels[fmt.Sprintf("l%d", i)] = "v"
			exprs = append(exprs, metav1.LabelSelectorRequirement{Key: fmt.Sprintf("e%d", i), Operator: metav1.LabelSelectorOpExists})
		}
		return labels, exprs
	}
	ten, tenExprs := many(10)
	eleven, elevenExprs := many(11)
	for _, tc := range []struct {
		name string
		set  *topologyv1alpha1.PartitionSet
		want []string // "<type> <field>"; none for a valid set
	}{
		{name: "dimensions and a selector", set: cloudRegion()},
		{name: "nothing", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec = topologyv1alpha1.PartitionSetSpec{} })},
		{name: "a prefixed dimension", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = []string{"topology.kubernetes.io/region"} })},
		{name: "a dimension twice", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = []string{"region", "region"} })},
		{name: "a dimension that is no label key", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = []string{"region", "cloud provider"} }),
			want: []string{"FieldValueInvalid spec.dimensions[1]"}},
		{name: "an empty dimension", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = []string{""} }),
			want: []string{"FieldValueInvalid spec.dimensions[0]"}},
		{name: "ten labels and ten expressions", set: cloudRegion(selector(&metav1.LabelSelector{MatchLabels: ten, MatchExpressions: tenExprs}))},
		{name: "eleven labels", set: cloudRegion(selector(&metav1.LabelSelector{MatchLabels: eleven})),
			want: []string{"FieldValueTooMany spec.shardSelector.matchLabels"}},
		{name: "eleven expressions", set: cloudRegion(selector(&metav1.LabelSelector{MatchExpressions: elevenExprs})),
			want: []string{"FieldValueTooMany spec.shardSelector.matchExpressions"}},
		{name: "an empty label value", set: cloudRegion(selector(&metav1.LabelSelector{MatchLabels: map[string]string{"region": ""}})),
			want: []string{"FieldValueInvalid spec.shardSelector.matchLabels[region]"}},
		{name: "an empty expression value", set: cloudRegion(selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"europe", ""}}}})),
			want: []string{"FieldValueInvalid spec.shardSelector.matchExpressions[0].values[1]"}},
		{name: "a bad label key", set: cloudRegion(selector(&metav1.LabelSelector{MatchLabels: map[string]string{"-region": "europe"}})),
			want: []string{"FieldValueInvalid spec.shardSelector.matchLabels"}},
		{name: "an unknown operator", set: cloudRegion(selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "region", Operator: "Near", Values: []string{"europe"}}}})),
			want: []string{"FieldValueInvalid spec.shardSelector.matchExpressions[0].operator"}},
		{name: "In without values", set: cloudRegion(selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "region", Operator: metav1.LabelSelectorOpIn}}})),
			want: []string{"FieldValueRequired spec.shardSelector.matchExpressions[0].values"}},
		{name: "DoesNotExist with values", set: cloudRegion(selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "excluded", Operator: metav1.LabelSelectorOpDoesNotExist, Values: []string{"true"}}}})),
			want: []string{"FieldValueForbidden spec.shardSelector.matchExpressions[0].values"}},
		{name: "a name that is not a DNS subdomain", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Name = "cloud_region" }),
			want: []string{"FieldValueInvalid metadata.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := st.Validate(t.Context(), tc.set)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	s := cloudRegion(func(s *topologyv1alpha1.PartitionSet) {
		s.Generation = 4
		s.Status.Count = 3
		conditionsv1alpha1.MarkTrue(s, topologyv1alpha1.PartitionsReady)
	})
	st.PrepareForCreate(t.Context(), s)
	if diff := cmp.Diff(topologyv1alpha1.PartitionSetStatus{}, s.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if s.Generation != 1 {
		t.Errorf("generation %d, want 1", s.Generation)
	}
}

// TestUpdate prepares and validates updates, as the API server does.
func TestUpdate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	stored := func(s *topologyv1alpha1.PartitionSet) {
		s.Generation = 2
		s.Status.Count = 4
		conditionsv1alpha1.MarkTrue(s, topologyv1alpha1.PartitionsReady)
	}
	for _, tc := range []struct {
		name           string
		set            *topologyv1alpha1.PartitionSet
		want           []string
		wantGeneration int64
	}{
		{name: "a label", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Labels = map[string]string{"a": "b"} }), wantGeneration: 2},
		{name: "another dimension", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = []string{"region"} }), wantGeneration: 3},
		{name: "no selector", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec.ShardSelector = nil }), wantGeneration: 3},
		{name: "a bad dimension", set: cloudRegion(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = []string{"/region"} }),
			want: []string{"FieldValueInvalid spec.dimensions[0]"}, wantGeneration: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cloudRegion(stored)
			s := tc.set.DeepCopy()
			s.Generation = old.Generation // as rest.BeforeUpdate sets it
			s.Status = topologyv1alpha1.PartitionSetStatus{Count: 9}
			st.PrepareForUpdate(t.Context(), s, old)
			if diff := cmp.Diff(old.Status, s.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if s.Generation != tc.wantGeneration {
				t.Errorf("generation %d, want %d", s.Generation, tc.wantGeneration)
			}
			errs := st.ValidateUpdate(t.Context(), s, old)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestStatusUpdate(t *testing.T) {
	status := statusStrategy{newStrategy(runtime.NewScheme())}
	old := cloudRegion(func(s *topologyv1alpha1.PartitionSet) {
		s.Generation = 2
		s.Labels = map[string]string{"l": "old"}
	})
	managed := []metav1.ManagedFieldsEntry{{Manager: "partitionset", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "topology.kcp.io/v1alpha1", Subresource: "status"}}
	s := cloudRegion(func(s *topologyv1alpha1.PartitionSet) {
		s.Generation = 2
		s.Labels = map[string]string{"l": "new"}
		s.ManagedFields = managed
		s.Spec = topologyv1alpha1.PartitionSetSpec{Dimensions: []string{"other"}}
		s.Status.Count = 2
		conditionsv1alpha1.MarkTrue(s, topologyv1alpha1.PartitionSetValid)
	})
	status.PrepareForUpdate(t.Context(), s, old)
	if diff := cmp.Diff(old.Spec, s.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	want := old.ObjectMeta.DeepCopy()
	want.ManagedFields = managed
	if diff := cmp.Diff(*want, s.ObjectMeta); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if s.Status.Count != 2 || !conditionsv1alpha1.IsTrue(s, topologyv1alpha1.PartitionSetValid) {
		t.Errorf("status %+v, want the new one", s.Status)
	}
	if errs := status.ValidateUpdate(t.Context(), s, old); len(errs) > 0 {
		t.Errorf("setting the status: %v", errs)
	}
}
