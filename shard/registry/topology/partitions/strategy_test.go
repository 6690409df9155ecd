package partitions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store/storetest"
)

// europe is the partition of kcp's documentation: the shards of gcp in
// europe, outside Liechtenstein.
func europe(change ...func(*topologyv1alpha1.Partition)) *topologyv1alpha1.Partition {
	p := &topologyv1alpha1.Partition{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud-region-gcp-europe-xdfgs", ResourceVersion: "1"},
		Spec: topologyv1alpha1.PartitionSpec{Selector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"cloud": "gcp", "region": "europe"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "country", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"LI"}}},
		}},
	}
	for _, c := range change {
		c(p)
	}
	return p
}

func TestValidate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	requirement := func(r metav1.LabelSelectorRequirement) func(*topologyv1alpha1.Partition) {
		return func(p *topologyv1alpha1.Partition) {
			p.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{r}
		}
	}
	for _, tc := range []struct {
		name      string
		partition *topologyv1alpha1.Partition
		want      []string // "<type> <field>"; none for a valid partition
	}{
		{name: "labels and expressions", partition: europe()},
		{name: "no selector", partition: europe(func(p *topologyv1alpha1.Partition) { p.Spec.Selector = nil })},
		{name: "an empty selector", partition: europe(func(p *topologyv1alpha1.Partition) { p.Spec.Selector = &metav1.LabelSelector{} })},
		{name: "a key that is no label key", partition: europe(func(p *topologyv1alpha1.Partition) {
			p.Spec.Selector.MatchLabels = map[string]string{"cloud region": "gcp"}
		}),
			want: []string{"FieldValueInvalid spec.selector.matchLabels"}},
		{name: "a value that is no label value", partition: europe(func(p *topologyv1alpha1.Partition) { p.Spec.Selector.MatchLabels = map[string]string{"cloud": "g c p"} }),
			want: []string{"FieldValueInvalid spec.selector.matchLabels"}},
		{name: "an unknown operator", partition: europe(requirement(metav1.LabelSelectorRequirement{Key: "country", Operator: "Near", Values: []string{"LI"}})),
			want: []string{"FieldValueInvalid spec.selector.matchExpressions[0].operator"}},
		{name: "NotIn without values", partition: europe(requirement(metav1.LabelSelectorRequirement{Key: "country", Operator: metav1.LabelSelectorOpNotIn})),
			want: []string{"FieldValueRequired spec.selector.matchExpressions[0].values"}},
		{name: "Exists with values", partition: europe(requirement(metav1.LabelSelectorRequirement{Key: "country", Operator: metav1.LabelSelectorOpExists, Values: []string{"LI"}})),
			want: []string{"FieldValueForbidden spec.selector.matchExpressions[0].values"}},
		{name: "a name that is not a DNS subdomain", partition: europe(func(p *topologyv1alpha1.Partition) { p.Name = "Europe" }),
			want: []string{"FieldValueInvalid metadata.name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := st.Validate(t.Context(), tc.partition)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

func TestPrepareForCreate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	p := europe(func(p *topologyv1alpha1.Partition) { p.Generation = 5 })
	st.PrepareForCreate(t.Context(), p)
	if p.Generation != 1 {
		t.Errorf("generation %d, want 1", p.Generation)
	}
}

// TestUpdate prepares and validates updates, as the API server does.
func TestUpdate(t *testing.T) {
	st := newStrategy(runtime.NewScheme())
	for _, tc := range []struct {
		name           string
		partition      *topologyv1alpha1.Partition
		want           []string
		wantGeneration int64
	}{
		{name: "a label", partition: europe(func(p *topologyv1alpha1.Partition) { p.Labels = map[string]string{"a": "b"} }), wantGeneration: 2},
		{name: "another selector", partition: europe(func(p *topologyv1alpha1.Partition) { p.Spec.Selector.MatchLabels["region"] = "asia" }), wantGeneration: 3},
		{name: "no selector", partition: europe(func(p *topologyv1alpha1.Partition) { p.Spec.Selector = nil }), wantGeneration: 3},
		{name: "an invalid selector", partition: europe(func(p *topologyv1alpha1.Partition) { p.Spec.Selector.MatchLabels["region"] = "-europe" }),
			want: []string{"FieldValueInvalid spec.selector.matchLabels"}, wantGeneration: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := europe(func(p *topologyv1alpha1.Partition) { p.Generation = 2 })
			p := tc.partition.DeepCopy()
			p.Generation = old.Generation // as rest.BeforeUpdate sets it
			st.PrepareForUpdate(t.Context(), p, old)
			if p.Generation != tc.wantGeneration {
				t.Errorf("generation %d, want %d", p.Generation, tc.wantGeneration)
			}
			errs := st.ValidateUpdate(t.Context(), p, old)
			if diff := cmp.Diff(tc.want, storetest.Fields(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}
