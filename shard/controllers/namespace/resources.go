package namespace

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// resource is a namespaced resource whose objects a namespace deletion
// removes.
type resource struct {
	schema.GroupVersionResource
	// deleteCollection tells whether the resource supports deletecollection;
	// without it objects are deleted one by one.
	deleteCollection bool
}

// deletableResources returns the namespaced resources of lists (discovery
// output for one logical cluster) whose objects can be listed and deleted,
// skipping subresources. It fails for group versions it cannot parse, but
// returns the resources of the others.
func deletableResources(lists []*metav1.APIResourceList) ([]resource, error) {
	var (
		out  []resource
		errs []string
	)
	for _, list := range lists {
		if list == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%q: %v", list.GroupVersion, err))
			continue
		}
		for _, r := range list.APIResources {
			if !r.Namespaced || strings.Contains(r.Name, "/") {
				continue
			}
			verbs := r.Verbs
			canDelete := slices.Contains(verbs, "delete")
			canDeleteCollection := slices.Contains(verbs, "deletecollection")
			if !slices.Contains(verbs, "list") || (!canDelete && !canDeleteCollection) {
				continue
			}
			out = append(out, resource{GroupVersionResource: gv.WithResource(r.Name), deleteCollection: canDeleteCollection})
		}
	}
	slices.SortFunc(out, func(a, b resource) int {
		return strings.Compare(a.GroupResource().String(), b.GroupResource().String())
	})
	if len(errs) > 0 {
		slices.Sort(errs)
		return out, fmt.Errorf("cannot parse group versions %s", strings.Join(errs, ", "))
	}
	return out, nil
}
