package server

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/registry/rest"
)

// builtinNames are the names the built-in APIs use, by group, as the
// endpoint installer derives them from the storage: resource names (plural,
// singular, short names) and kinds (kind, list kind). The CRD naming
// controller gives none of them to a CRD of the same group.
type builtinNames map[string]*groupNames

type groupNames struct {
	resources, kinds sets.Set[string]
}

// newBuiltinNames collects the names of the storage installed per group.
func newBuiltinNames(scheme *runtime.Scheme, groups map[string]groupStorage) (builtinNames, error) {
	names := builtinNames{}
	for group, versions := range groups {
		g := &groupNames{resources: sets.New[string](), kinds: sets.New[string]()}
		names[group] = g
		for version, storage := range versions {
			for resource, st := range storage {
				if strings.Contains(resource, "/") {
					continue // subresources have no names of their own
				}
				kind, err := storageKind(scheme, schema.GroupVersion{Group: group, Version: version}, st)
				if err != nil {
					return nil, fmt.Errorf("%s/%s %s: %w", group, version, resource, err)
				}
				singular := strings.ToLower(kind)
				if p, ok := st.(rest.SingularNameProvider); ok {
					singular = p.GetSingularName()
				}
				g.resources.Insert(resource, singular)
				if p, ok := st.(rest.ShortNamesProvider); ok {
					g.resources.Insert(p.ShortNames()...)
				}
				g.kinds.Insert(kind, kind+"List")
			}
		}
	}
	return names, nil
}

// storageKind is the kind a storage serves in gv.
func storageKind(scheme *runtime.Scheme, gv schema.GroupVersion, st rest.Storage) (string, error) {
	if p, ok := st.(rest.GroupVersionKindProvider); ok {
		return p.GroupVersionKind(gv).Kind, nil
	}
	kinds, _, err := scheme.ObjectKinds(st.New())
	if err != nil {
		return "", err
	}
	return kinds[0].Kind, nil
}

// lookup implements naming.BuiltinNames.
func (b builtinNames) lookup(group string) (resources, kinds []string) {
	g := b[group]
	if g == nil {
		return nil, nil
	}
	return sets.List(g.resources), sets.List(g.kinds)
}
