package partitionset

import (
	"maps"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
)

// group is a set of shards that share the values of the dimensions.
type group struct {
	// key identifies the group: +<label>=<value> for each of its
	// matchLabels, in the order of the sorted label keys (kcp's form).
	key string
	// dimensions maps each dimension to the group's value.
	dimensions map[string]string
	// matchLabels are the dimension values and the shard selector's
	// matchLabels.
	matchLabels map[string]string
}

// groupShards groups shards (already filtered by the set's shard selector)
// by the values of the labels dimensions and selectorLabels (the shard
// selector's matchLabels), as kcp partitions them: a shard that lacks one
// of these labels is in no group, and there is no group at all when there
// are no such labels. Groups are sorted by key.
func groupShards(shards []*corev1alpha1.Shard, dimensions []string, selectorLabels map[string]string) []group {
	keys := sets.New(dimensions...)
	keys.Insert(slices.Collect(maps.Keys(selectorLabels))...)
	if keys.Len() == 0 {
		return nil
	}
	sorted := sets.List(keys)
	byKey := map[string]group{}
	for _, sh := range shards {
		var key strings.Builder
		matchLabels := make(map[string]string, len(sorted))
		complete := true
		for _, l := range sorted {
			v, ok := sh.Labels[l]
			if !ok {
				complete = false
				break
			}
			key.WriteString("+" + l + "=" + v)
			matchLabels[l] = v
		}
		if !complete {
			continue
		}
		if _, ok := byKey[key.String()]; ok {
			continue
		}
		g := group{key: key.String(), dimensions: make(map[string]string, len(dimensions)), matchLabels: matchLabels}
		for _, d := range dimensions {
			g.dimensions[d] = matchLabels[d]
		}
		byKey[g.key] = g
	}
	groups := make([]group, 0, len(byKey))
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		groups = append(groups, byKey[k])
	}
	return groups
}

// dimensionsOf returns the dimensions of a set, each once, sorted, as kcp
// deduplicates them.
func dimensionsOf(set *topologyv1alpha1.PartitionSet) []string {
	return sets.List(sets.New(set.Spec.Dimensions...))
}

// partitionBaseName is kcp's base of the generated name of a group's
// Partition: the set's name and the group's value of each dimension (in
// the order of the sorted dimensions), lower case, joined by "-". An
// underscore, valid in label values but not in names, becomes "-".
func partitionBaseName(setName string, dimensions []string, g group) string {
	name := setName
	for _, d := range dimensions {
		name += "-" + strings.ReplaceAll(strings.ToLower(g.dimensions[d]), "_", "-")
	}
	return name[:min(validation.DNS1123SubdomainMaxLength-1, len(name))]
}

// setGVK is the kind of the owner reference of generated Partitions.
var setGVK = topologyv1alpha1.SchemeGroupVersion.WithKind("PartitionSet")

// desiredSelector is the selector of a group's Partition.
func desiredSelector(set *topologyv1alpha1.PartitionSet, g group) *metav1.LabelSelector {
	sel := &metav1.LabelSelector{MatchLabels: maps.Clone(g.matchLabels)}
	if set.Spec.ShardSelector != nil && len(set.Spec.ShardSelector.MatchExpressions) > 0 {
		sel.MatchExpressions = make([]metav1.LabelSelectorRequirement, len(set.Spec.ShardSelector.MatchExpressions))
		for i := range set.Spec.ShardSelector.MatchExpressions {
			set.Spec.ShardSelector.MatchExpressions[i].DeepCopyInto(&sel.MatchExpressions[i])
		}
	}
	return sel
}

// newPartition returns the Partition to create for a group.
func newPartition(set *topologyv1alpha1.PartitionSet, dimensions []string, g group) *topologyv1alpha1.Partition {
	return &topologyv1alpha1.Partition{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    partitionBaseName(set.Name, dimensions, g) + "-",
			Labels:          maps.Clone(g.dimensions),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, setGVK)},
		},
		Spec: topologyv1alpha1.PartitionSpec{Selector: desiredSelector(set, g)},
	}
}

// ownedBy tells whether p has an owner reference to set (by UID, kind and
// group, as kcp checks).
func ownedBy(p *topologyv1alpha1.Partition, set *topologyv1alpha1.PartitionSet) bool {
	for _, o := range p.OwnerReferences {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err == nil && o.UID == set.UID && o.Kind == setGVK.Kind && gv.Group == setGVK.Group {
			return true
		}
	}
	return false
}

// groupKeyOf returns the key of the group whose dimension values p's
// selector has, and false if it lacks one of the dimensions. With no
// dimensions, every Partition is of the one group "".
func groupKeyOf(p *topologyv1alpha1.Partition, dimensions []string) (string, bool) {
	var matchLabels map[string]string
	if p.Spec.Selector != nil {
		matchLabels = p.Spec.Selector.MatchLabels
	}
	var key strings.Builder
	for _, d := range dimensions {
		v, ok := matchLabels[d]
		if !ok {
			return "", false
		}
		key.WriteString("+" + d + "=" + v)
	}
	return key.String(), true
}

// dimensionKey is the key of a group by its dimension values only, the
// part of a group that names its Partition.
func dimensionKey(g group, dimensions []string) string {
	var key strings.Builder
	for _, d := range dimensions {
		key.WriteString("+" + d + "=" + g.dimensions[d])
	}
	return key.String()
}

// plan is what brings the Partitions of a set to its groups.
type plan struct {
	create []*topologyv1alpha1.Partition
	update []*topologyv1alpha1.Partition
	delete []*topologyv1alpha1.Partition
}

// planPartitions compares the Partitions the set owns (existing, of any
// order) with its groups. For each group the first existing Partition (by
// name) with its dimension values is kept, and updated if its selector or
// its dimension labels differ; a group without one gets a new Partition;
// every other owned Partition is deleted. Partitions of others are left
// alone. existing is not modified.
func planPartitions(set *topologyv1alpha1.PartitionSet, groups []group, existing []*topologyv1alpha1.Partition) plan {
	dimensions := dimensionsOf(set)
	wanted := make(map[string]group, len(groups))
	for _, g := range groups {
		wanted[dimensionKey(g, dimensions)] = g
	}
	owned := slices.Clone(existing)
	slices.SortFunc(owned, func(a, b *topologyv1alpha1.Partition) int { return strings.Compare(a.Name, b.Name) })
	var p plan
	kept := sets.New[string]()
	for _, part := range owned {
		if !ownedBy(part, set) {
			continue
		}
		key, ok := groupKeyOf(part, dimensions)
		g, want := wanted[key]
		if !ok || !want || kept.Has(key) || part.DeletionTimestamp != nil {
			if part.DeletionTimestamp == nil {
				p.delete = append(p.delete, part)
			}
			continue
		}
		kept.Insert(key)
		if updated, changed := updatePartition(part, set, g); changed {
			p.update = append(p.update, updated)
		}
	}
	for _, g := range groups {
		if !kept.Has(dimensionKey(g, dimensions)) {
			p.create = append(p.create, newPartition(set, dimensions, g))
		}
	}
	return p
}

// updatePartition returns a copy of part with the group's selector and
// dimension labels, and whether anything changed. Other labels stay.
func updatePartition(part *topologyv1alpha1.Partition, set *topologyv1alpha1.PartitionSet, g group) (*topologyv1alpha1.Partition, bool) {
	want := desiredSelector(set, g)
	changed := !apiequality.Semantic.DeepEqual(part.Spec.Selector, want)
	for d, v := range g.dimensions {
		if cur, ok := part.Labels[d]; !ok || cur != v {
			changed = true
		}
	}
	if !changed {
		return part, false
	}
	updated := part.DeepCopy()
	updated.Spec.Selector = want
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	maps.Copy(updated.Labels, g.dimensions)
	return updated, true
}
