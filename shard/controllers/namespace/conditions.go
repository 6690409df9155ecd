package namespace

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// progress is what one pass over a terminating namespace found; it becomes
// the namespace's deletion conditions, with upstream's types, reasons and
// messages.
type progress struct {
	// discoveryErr reports group versions that could not be discovered.
	discoveryErr error
	// parseErr reports group versions that could not be parsed.
	parseErr error
	// contentErrs are the failures to delete, per resource.
	contentErrs map[schema.GroupResource]error
	// remaining counts the objects left, per resource.
	remaining map[schema.GroupResource]int
	// finalizers counts the objects left that carry each finalizer.
	finalizers map[string]int
}

// deletionConditionTypes returns the conditions a terminating namespace
// gets, in upstream's order.
func deletionConditionTypes() []corev1.NamespaceConditionType {
	return []corev1.NamespaceConditionType{
		corev1.NamespaceDeletionDiscoveryFailure,
		corev1.NamespaceDeletionGVParsingFailure,
		corev1.NamespaceDeletionContentFailure,
		corev1.NamespaceContentRemaining,
		corev1.NamespaceFinalizersRemaining,
	}
}

// okCondition returns the condition of type t of a namespace with nothing
// to report, as upstream words it.
func okCondition(t corev1.NamespaceConditionType) corev1.NamespaceCondition {
	c := corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse}
	switch t {
	case corev1.NamespaceDeletionDiscoveryFailure:
		c.Reason, c.Message = "ResourcesDiscovered", "All resources successfully discovered"
	case corev1.NamespaceDeletionGVParsingFailure:
		c.Reason, c.Message = "ParsedGroupVersions", "All legacy kube types successfully parsed"
	case corev1.NamespaceDeletionContentFailure:
		c.Reason, c.Message = "ContentDeleted", "All content successfully deleted, may be waiting on finalization"
	case corev1.NamespaceContentRemaining:
		c.Reason, c.Message = "ContentRemoved", "All content successfully removed"
	case corev1.NamespaceFinalizersRemaining:
		c.Reason, c.Message = "ContentHasNoFinalizers", "All content-preserving finalizers finished"
	}
	return c
}

// conditions returns the deletion conditions for p, without timestamps.
func (p *progress) conditions() []corev1.NamespaceCondition {
	failed := map[corev1.NamespaceConditionType]corev1.NamespaceCondition{}
	if p.discoveryErr != nil {
		failed[corev1.NamespaceDeletionDiscoveryFailure] = corev1.NamespaceCondition{
			Reason: "DiscoveryFailed", Message: fmt.Sprintf("Discovery failed for some groups: %v", p.discoveryErr),
		}
	}
	if p.parseErr != nil {
		failed[corev1.NamespaceDeletionGVParsingFailure] = corev1.NamespaceCondition{
			Reason: "GroupVersionParsingFailed", Message: fmt.Sprintf("Failed to parse some group versions: %v", p.parseErr),
		}
	}
	if len(p.contentErrs) > 0 {
		msgs := make([]string, 0, len(p.contentErrs))
		for _, gr := range sortedGroupResources(p.contentErrs) {
			msgs = append(msgs, fmt.Sprintf("%s: %v", gr, p.contentErrs[gr]))
		}
		failed[corev1.NamespaceDeletionContentFailure] = corev1.NamespaceCondition{
			Reason:  "ContentDeletionFailed",
			Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %s", len(msgs), strings.Join(msgs, ", ")),
		}
	}
	if len(p.remaining) > 0 {
		msgs := make([]string, 0, len(p.remaining))
		for _, gr := range sortedGroupResources(p.remaining) {
			msgs = append(msgs, fmt.Sprintf("%s has %d resource instances", gr, p.remaining[gr]))
		}
		failed[corev1.NamespaceContentRemaining] = corev1.NamespaceCondition{
			Reason: "SomeResourcesRemain", Message: "Some resources are remaining: " + strings.Join(msgs, ", "),
		}
	}
	if len(p.finalizers) > 0 {
		msgs := make([]string, 0, len(p.finalizers))
		for _, f := range slices.Sorted(maps.Keys(p.finalizers)) {
			msgs = append(msgs, fmt.Sprintf("%s in %d resource instances", f, p.finalizers[f]))
		}
		failed[corev1.NamespaceFinalizersRemaining] = corev1.NamespaceCondition{
			Reason: "SomeFinalizersRemain", Message: "Some content in the namespace has finalizers remaining: " + strings.Join(msgs, ", "),
		}
	}

	types := deletionConditionTypes()
	out := make([]corev1.NamespaceCondition, 0, len(types))
	for _, t := range types {
		c, bad := failed[t]
		if !bad {
			out = append(out, okCondition(t))
			continue
		}
		c.Type, c.Status = t, corev1.ConditionTrue
		out = append(out, c)
	}
	return out
}

// mergeConditions returns existing with the conditions of want set, and
// whether anything changed. A condition keeps its last transition time
// unless its status changes.
func mergeConditions(existing, want []corev1.NamespaceCondition, now metav1.Time) ([]corev1.NamespaceCondition, bool) {
	out := slices.Clone(existing)
	changed := false
	for _, w := range want {
		i := slices.IndexFunc(out, func(c corev1.NamespaceCondition) bool { return c.Type == w.Type })
		if i < 0 {
			w.LastTransitionTime = now
			out = append(out, w)
			changed = true
			continue
		}
		old := out[i]
		if old.Status == w.Status && old.Reason == w.Reason && old.Message == w.Message {
			continue
		}
		w.LastTransitionTime = old.LastTransitionTime
		if old.Status != w.Status {
			w.LastTransitionTime = now
		}
		out[i] = w
		changed = true
	}
	return out, changed
}

func sortedGroupResources[V any](m map[schema.GroupResource]V) []schema.GroupResource {
	return slices.SortedFunc(maps.Keys(m), func(a, b schema.GroupResource) int {
		return strings.Compare(a.String(), b.String())
	})
}
