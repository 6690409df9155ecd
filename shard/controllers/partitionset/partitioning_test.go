package partitionset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
)

func shard(name string, labels map[string]string) *corev1alpha1.Shard {
	return &corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// fleet is kcp's example of shards: four in Europe (three on Azure, one on
// AWS), one in Asia, all in production.
var fleet = []*corev1alpha1.Shard{
	shard("shard2", map[string]string{"region": "Europe", "cloud": "Azure", "az": "EU-1", "environment": "prod"}),
	shard("shard4", map[string]string{"region": "Europe", "cloud": "Azure", "az": "EU-2", "environment": "prod"}),
	shard("shard5", map[string]string{"region": "Europe", "cloud": "Azure", "az": "EU-3", "environment": "prod"}),
	shard("shard6", map[string]string{"region": "Europe", "cloud": "AWS", "az": "EU-3", "environment": "prod"}),
	shard("shard7", map[string]string{"region": "Asia", "cloud": "Azure", "az": "cn-west-1", "environment": "prod"}),
}

func TestGroupShards(t *testing.T) {
	for _, tc := range []struct {
		name           string
		shards         []*corev1alpha1.Shard
		dimensions     []string
		selectorLabels map[string]string
		want           []string // the groups' keys
	}{
		{name: "no dimension", shards: fleet},
		{name: "a dimension no shard has", shards: fleet, dimensions: []string{"doesnotexist"}},
		{name: "by region", shards: fleet, dimensions: []string{"region"}, want: []string{"+region=Asia", "+region=Europe"}},
		{name: "by region and cloud", shards: fleet, dimensions: []string{"region", "cloud"},
			want: []string{"+cloud=AWS+region=Europe", "+cloud=Azure+region=Asia", "+cloud=Azure+region=Europe"}},
		{name: "with the selector's labels", shards: fleet, dimensions: []string{"region", "cloud"}, selectorLabels: map[string]string{"environment": "prod"},
			want: []string{"+cloud=AWS+environment=prod+region=Europe", "+cloud=Azure+environment=prod+region=Asia", "+cloud=Azure+environment=prod+region=Europe"}},
		{name: "the selector's labels alone", shards: fleet, selectorLabels: map[string]string{"environment": "prod"}, want: []string{"+environment=prod"}},
		{name: "shards without a dimension are left out", dimensions: []string{"region"},
			shards: []*corev1alpha1.Shard{shard("root", map[string]string{"name": "root"}), shard("eu", map[string]string{"region": "eu"})},
			want:   []string{"+region=eu"}},
		{name: "no shard", dimensions: []string{"region"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, g := range groupShards(tc.shards, tc.dimensions, tc.selectorLabels) {
				got = append(got, g.key)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("values", func(t *testing.T) {
		groups := groupShards(fleet, []string{"region"}, map[string]string{"environment": "prod"})
		want := group{key: "+environment=prod+region=Asia", dimensions: map[string]string{"region": "Asia"}, matchLabels: map[string]string{"environment": "prod", "region": "Asia"}}
		if diff := cmp.Diff(want, groups[0], cmp.AllowUnexported(group{})); diff != "" {
			t.Errorf("group (-want +got):\n%s", diff)
		}
	})
}

func TestPartitionBaseName(t *testing.T) {
	g := group{dimensions: map[string]string{"region": "Europe", "cloud": "GCP", "zone": "eu_west_1"}}
	if got := partitionBaseName("cloud-region", []string{"cloud", "region"}, g); got != "cloud-region-gcp-europe" {
		t.Errorf("name %q, want kcp's cloud-region-gcp-europe", got)
	}
	if got := partitionBaseName("zones", []string{"zone"}, g); got != "zones-eu-west-1" {
		t.Errorf("name %q: an underscore is not valid in a name", got)
	}
	long := group{dimensions: map[string]string{"a": "x"}}
	if got := partitionBaseName(strings.Repeat("n", 300), []string{"a"}, long); len(got) != validation.DNS1123SubdomainMaxLength-1 {
		t.Errorf("a long name is %d characters, want %d", len(got), validation.DNS1123SubdomainMaxLength-1)
	}
}

// regions is a PartitionSet by region of the shards without the label
// excluded.
func regions(change ...func(*topologyv1alpha1.PartitionSet)) *topologyv1alpha1.PartitionSet {
	s := &topologyv1alpha1.PartitionSet{
		ObjectMeta: metav1.ObjectMeta{Name: "regions", UID: "set-uid"},
		Spec: topologyv1alpha1.PartitionSetSpec{
			Dimensions: []string{"region"},
			ShardSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "excluded", Operator: metav1.LabelSelectorOpDoesNotExist},
			}},
		},
	}
	for _, c := range change {
		c(s)
	}
	return s
}

// existing is a Partition of set named name with the given selector
// labels, as the controller generates it.
func existing(set *topologyv1alpha1.PartitionSet, name string, matchLabels map[string]string) *topologyv1alpha1.Partition {
	g := group{matchLabels: matchLabels, dimensions: map[string]string{}}
	for _, d := range set.Spec.Dimensions {
		if v, ok := matchLabels[d]; ok {
			g.dimensions[d] = v
		}
	}
	p := newPartition(set, dimensionsOf(set), g)
	p.Name, p.GenerateName, p.UID = name, "", types.UID(name+"-uid")
	return p
}

// names returns the name (or generateName) of each partition.
func names(ps []*topologyv1alpha1.Partition) []string {
	var out []string
	for _, p := range ps {
		if p.Name != "" {
			out = append(out, p.Name)
		} else {
			out = append(out, p.GenerateName)
		}
	}
	return out
}

func TestPlanPartitions(t *testing.T) {
	set := regions()
	eu, us := map[string]string{"region": "eu"}, map[string]string{"region": "us"}
	twoRegions := []*corev1alpha1.Shard{shard("a", eu), shard("b", us), shard("c", eu)}
	for _, tc := range []struct {
		name                    string
		set                     *topologyv1alpha1.PartitionSet
		shards                  []*corev1alpha1.Shard
		existing                []*topologyv1alpha1.Partition
		create, update, deleted []string
	}{
		{name: "creates one per group", set: set, shards: twoRegions, create: []string{"regions-eu-", "regions-us-"}},
		{name: "keeps what is there", set: set, shards: twoRegions,
			existing: []*topologyv1alpha1.Partition{existing(set, "regions-us-x", us), existing(set, "regions-eu-y", eu)}},
		{name: "deletes a group that is gone", set: set, shards: []*corev1alpha1.Shard{shard("b", us)},
			existing: []*topologyv1alpha1.Partition{existing(set, "regions-us-x", us), existing(set, "regions-eu-y", eu)},
			deleted:  []string{"regions-eu-y"}},
		{name: "deletes a duplicate", set: set, shards: []*corev1alpha1.Shard{shard("b", us)},
			existing: []*topologyv1alpha1.Partition{existing(set, "regions-us-b", us), existing(set, "regions-us-a", us)},
			deleted:  []string{"regions-us-b"}},
		{name: "leaves Partitions of others alone", set: set, shards: []*corev1alpha1.Shard{shard("b", us)},
			existing: []*topologyv1alpha1.Partition{
				existing(regions(func(s *topologyv1alpha1.PartitionSet) { s.UID = "other" }), "regions-eu-old", eu),
				{ObjectMeta: metav1.ObjectMeta{Name: "by-hand"}, Spec: topologyv1alpha1.PartitionSpec{Selector: &metav1.LabelSelector{MatchLabels: us}}},
			},
			create: []string{"regions-us-"}},
		{name: "updates the selector in place", shards: twoRegions,
			set: regions(func(s *topologyv1alpha1.PartitionSet) {
				s.Spec.ShardSelector.MatchExpressions[0].Key = "unschedulable"
			}),
			existing: []*topologyv1alpha1.Partition{existing(set, "regions-us-x", us), existing(set, "regions-eu-y", eu)},
			update:   []string{"regions-eu-y", "regions-us-x"}},
		{name: "restores dimension labels", set: set, shards: []*corev1alpha1.Shard{shard("b", us)},
			existing: []*topologyv1alpha1.Partition{func() *topologyv1alpha1.Partition {
				p := existing(set, "regions-us-x", us)
				p.Labels = map[string]string{"keep": "me"}
				return p
			}()},
			update: []string{"regions-us-x"}},
		{name: "other dimensions replace every Partition", shards: []*corev1alpha1.Shard{shard("b", map[string]string{"region": "us", "cloud": "gcp"})},
			set:      regions(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = []string{"region", "cloud"} }),
			existing: []*topologyv1alpha1.Partition{existing(set, "regions-us-x", us)},
			create:   []string{"regions-gcp-us-"}, deleted: []string{"regions-us-x"}},
		{name: "nothing to group by", set: regions(func(s *topologyv1alpha1.PartitionSet) { s.Spec.Dimensions = nil }), shards: twoRegions,
			existing: []*topologyv1alpha1.Partition{existing(set, "regions-us-x", us)},
			deleted:  []string{"regions-us-x"}},
		{name: "a Partition being deleted is replaced", set: set, shards: []*corev1alpha1.Shard{shard("b", us)},
			existing: []*topologyv1alpha1.Partition{func() *topologyv1alpha1.Partition {
				p := existing(set, "regions-us-x", us)
				p.DeletionTimestamp = &metav1.Time{}
				return p
			}()},
			create: []string{"regions-us-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups := groupShards(tc.shards, dimensionsOf(tc.set), nil)
			var before []*topologyv1alpha1.Partition
			for _, p := range tc.existing {
				before = append(before, p.DeepCopy())
			}
			p := planPartitions(tc.set, groups, tc.existing)
			if diff := cmp.Diff(tc.create, names(p.create)); diff != "" {
				t.Errorf("created (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.update, names(p.update)); diff != "" {
				t.Errorf("updated (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.deleted, names(p.delete)); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.existing); diff != "" {
				t.Errorf("the existing Partitions were modified (-before +after):\n%s", diff)
			}
			// Whatever is created or updated selects its group exactly.
			for _, part := range append(p.create, p.update...) {
				want := map[string]string{}
				for _, d := range tc.set.Spec.Dimensions {
					want[d] = part.Spec.Selector.MatchLabels[d]
				}
				for k, v := range want {
					if part.Labels[k] != v {
						t.Errorf("%s: label %s=%q, want %q", names([]*topologyv1alpha1.Partition{part})[0], k, part.Labels[k], v)
					}
				}
				if diff := cmp.Diff(tc.set.Spec.ShardSelector.MatchExpressions, part.Spec.Selector.MatchExpressions); diff != "" {
					t.Errorf("match expressions (-want +got):\n%s", diff)
				}
				if !ownedBy(part, tc.set) {
					t.Errorf("%v is not owned by the set", part.OwnerReferences)
				}
			}
		})
	}
}

func TestNewPartition(t *testing.T) {
	set := regions(func(s *topologyv1alpha1.PartitionSet) {
		s.Spec.ShardSelector.MatchLabels = map[string]string{"environment": "prod"}
	})
	groups := groupShards([]*corev1alpha1.Shard{shard("a", map[string]string{"region": "EU", "environment": "prod"})}, dimensionsOf(set), set.Spec.ShardSelector.MatchLabels)
	got := newPartition(set, dimensionsOf(set), groups[0])
	controller := true
	want := &topologyv1alpha1.Partition{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "regions-eu-",
			Labels:       map[string]string{"region": "EU"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "topology.kcp.io/v1alpha1", Kind: "PartitionSet", Name: "regions", UID: "set-uid",
				Controller: &controller, BlockOwnerDeletion: &controller,
			}},
		},
		Spec: topologyv1alpha1.PartitionSpec{Selector: &metav1.LabelSelector{
			MatchLabels:      map[string]string{"region": "EU", "environment": "prod"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "excluded", Operator: metav1.LabelSelectorOpDoesNotExist}},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("partition (-want +got):\n%s", diff)
	}
	// The selector is a copy: changing the set does not change it.
	set.Spec.ShardSelector.MatchExpressions[0].Key = "changed"
	if got.Spec.Selector.MatchExpressions[0].Key != "excluded" {
		t.Errorf("the partition shares its selector with the set")
	}
}
