package garbagecollector

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// isIgnored tells whether a resource is never monitored, as upstream's
// garbage collector ignores it: events are many, short-lived and never
// owners.
func isIgnored(gr schema.GroupResource) bool {
	return gr.Resource == "events" && (gr.Group == "" || gr.Group == "events.k8s.io")
}

// kindInfo is where objects of a kind live.
type kindInfo struct {
	resource   schema.GroupVersionResource
	namespaced bool
}

// builtins are the built-in resources the garbage collector monitors, and
// where the objects of every built-in kind live, for resolving owner
// references. They are the same in every logical cluster.
type builtins struct {
	resources []schema.GroupVersionResource
	kinds     map[schema.GroupKind]kindInfo
}

// has tells whether gr is a monitored built-in resource.
func (b *builtins) has(gr schema.GroupResource) bool {
	return slices.ContainsFunc(b.resources, func(r schema.GroupVersionResource) bool { return r.GroupResource() == gr })
}

// builtinResources reads lists (discovery output, one preferred version per
// resource). It monitors the resources whose objects can be owners and
// dependents: those that can be listed, watched and deleted, without
// subresources and ignored ones (isIgnored). It resolves every kind that can be
// read. Group versions that cannot be parsed are reported, the others
// returned.
func builtinResources(lists []*metav1.APIResourceList) (*builtins, error) {
	b := &builtins{kinds: map[schema.GroupKind]kindInfo{}}
	var errs []string
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
			gvr := gv.WithResource(r.Name)
			if strings.Contains(r.Name, "/") {
				continue
			}
			gk := gv.WithKind(r.Kind).GroupKind()
			if _, seen := b.kinds[gk]; !seen && slices.Contains(r.Verbs, "get") {
				b.kinds[gk] = kindInfo{resource: gvr, namespaced: r.Namespaced}
			}
			if isIgnored(gvr.GroupResource()) || b.has(gvr.GroupResource()) {
				continue
			}
			if slices.Contains(r.Verbs, "list") && slices.Contains(r.Verbs, "watch") && slices.Contains(r.Verbs, "delete") {
				b.resources = append(b.resources, gvr)
			}
		}
	}
	slices.SortFunc(b.resources, func(x, y schema.GroupVersionResource) int {
		return strings.Compare(x.GroupResource().String(), y.GroupResource().String())
	})
	if len(errs) > 0 {
		slices.Sort(errs)
		return b, fmt.Errorf("cannot parse group versions %s", strings.Join(errs, ", "))
	}
	return b, nil
}

// chooseVersion returns the version in which the resource that crds
// (CRDs of one name, from any logical clusters) define is watched across
// all clusters, and false when no CRD of them is Established. It keeps
// current while some Established CRD serves it, so that a monitor is not
// restarted needlessly; otherwise it takes, from the CRD of the first
// logical cluster by name, the storage version if served or else the first
// served version.
func chooseVersion(crds []*apiextensionsv1.CustomResourceDefinition, current string) (string, bool) {
	established := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(crds))
	for _, crd := range crds {
		if apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			established = append(established, crd)
		}
	}
	if len(established) == 0 {
		return "", false
	}
	if current != "" && slices.ContainsFunc(established, func(crd *apiextensionsv1.CustomResourceDefinition) bool {
		return apiextensionshelpers.HasServedCRDVersion(crd, current)
	}) {
		return current, true
	}
	slices.SortFunc(established, func(x, y *apiextensionsv1.CustomResourceDefinition) int {
		return cmp.Compare(logicalcluster.From(x), logicalcluster.From(y))
	})
	for _, crd := range established {
		if v, err := apiextensionshelpers.GetCRDStorageVersion(crd); err == nil && apiextensionshelpers.HasServedCRDVersion(crd, v) {
			return v, true
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				return v.Name, true
			}
		}
	}
	return "", false
}

// crdKind returns where objects of kind live according to the CRDs of one
// logical cluster, preferring the version of the owner reference.
func crdKind(crds []*apiextensionsv1.CustomResourceDefinition, gvk schema.GroupVersionKind) (kindInfo, bool) {
	for _, crd := range crds {
		if crd.Spec.Group != gvk.Group || crd.Spec.Names.Kind != gvk.Kind {
			continue
		}
		version := ""
		if apiextensionshelpers.HasServedCRDVersion(crd, gvk.Version) {
			version = gvk.Version
		} else {
			for _, v := range crd.Spec.Versions {
				if v.Served {
					version = v.Name
					break
				}
			}
		}
		if version == "" {
			continue
		}
		return kindInfo{
			resource:   schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural},
			namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		}, true
	}
	return kindInfo{}, false
}
