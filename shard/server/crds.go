package server

import (
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/customresources"
)

// byCRDName indexes CRDs of all clusters by their name (<plural>.<group>).
const byCRDName = "crdName"

func crdNameIndex(obj any) ([]string, error) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, nil
	}
	return []string{crd.Name}, nil
}

// crdFor returns the CRD serving group/resource in a logical cluster: the
// CRD of a resource bound through an APIBinding, or else the cluster's own
// CRD (the binding controller and CRD admission keep the two apart).
func (s *Server) crdFor(cluster logicalcluster.Name, group, resource string) (*apiextensionsv1.CustomResourceDefinition, error) {
	if crd, err := s.boundCRDFor(cluster, group, resource); err == nil || !apierrors.IsNotFound(err) {
		return crd, err
	}
	return s.crds.Lister().Cluster(cluster).Get(resource + "." + group)
}

// crdsOf lists the CRDs of a logical cluster, its own and those of the
// resources bound in it.
func (s *Server) crdsOf(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if cluster == logicalcluster.Wildcard {
		return s.wildcardCRDs()
	}
	own, err := s.crds.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	bound, err := s.boundCRDsOf(cluster)
	if err != nil || len(bound) == 0 {
		return own, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(own)+len(bound))
	for _, crd := range own {
		if _, ok := bound[crd.Name]; !ok {
			out = append(out, crd)
		}
	}
	names := make([]string, 0, len(bound))
	for name := range bound {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, bound[name])
	}
	return out, nil
}

// wildcardCRDs returns the synthetic CRD of every CRD name of the shard
// that some cluster serves: what requests across all clusters are served
// with (customresources.WildcardCRD).
func (s *Server) wildcardCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	names := s.crds.Informer().GetIndexer().ListIndexFuncValues(byCRDName)
	sort.Strings(names)
	out := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(names))
	for _, name := range names {
		resource, group, ok := strings.Cut(name, ".")
		if !ok {
			continue
		}
		crds, err := s.crdsNamed(group, resource)
		if err != nil {
			return nil, err
		}
		if crd := customresources.WildcardCRD(name, crds); crd != nil {
			out = append(out, crd)
		}
	}
	skip := map[string]bool{}
	for _, crd := range out {
		skip[crd.Name] = true
	}
	bound, err := s.wildcardBoundCRDs(skip)
	if err != nil {
		return nil, err
	}
	return append(out, bound...), nil
}

// crdsNamed returns the CRDs named <resource>.<group> in every logical
// cluster of the shard, for requests across all clusters. They come from
// the informer's cache: callers must not modify them.
func (s *Server) crdsNamed(group, resource string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	objs, err := s.crds.Informer().GetIndexer().ByIndex(byCRDName, resource+"."+group)
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
	for _, o := range objs {
		if crd, ok := o.(*apiextensionsv1.CustomResourceDefinition); ok {
			crds = append(crds, crd)
		}
	}
	return crds, nil
}

// crdEvents drops cached serving state and documents of a cluster whenever
// one of its CRDs changes (the serving state only when what it serves
// changes).
func (s *Server) crdEvents() cache.ResourceEventHandler {
	changed := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok {
			return
		}
		cluster := logicalcluster.From(crd)
		s.customResources.Invalidate(cluster, crd.Name)
		for _, f := range s.onCRDChange {
			f(cluster)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: changed,
		UpdateFunc: func(_, obj any) {
			crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
			if !ok {
				return
			}
			// A status-only change keeps the serving state and its watches.
			cluster := logicalcluster.From(crd)
			s.customResources.Update(cluster, crd)
			for _, f := range s.onCRDChange {
				f(cluster)
			}
		},
		DeleteFunc: changed,
	}
}
