package server

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
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

// crdFor returns the CRD serving group/resource in a logical cluster.
func (s *Server) crdFor(cluster logicalcluster.Name, group, resource string) (*apiextensionsv1.CustomResourceDefinition, error) {
	return s.crds.Lister().Cluster(cluster).Get(resource + "." + group)
}

// crdsOf lists the CRDs of a logical cluster.
func (s *Server) crdsOf(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return s.crds.Lister().Cluster(cluster).List(labels.Everything())
}

// anyCRDFor returns a CRD serving group/resource in some logical cluster,
// for requests across all clusters: the oldest, so the choice is stable.
func (s *Server) anyCRDFor(group, resource string) (*apiextensionsv1.CustomResourceDefinition, error) {
	name := resource + "." + group
	objs, err := s.crds.Informer().GetIndexer().ByIndex(byCRDName, name)
	if err != nil {
		return nil, err
	}
	var oldest *apiextensionsv1.CustomResourceDefinition
	for _, o := range objs {
		crd := o.(*apiextensionsv1.CustomResourceDefinition)
		if oldest == nil || crd.CreationTimestamp.Before(&oldest.CreationTimestamp) ||
			(crd.CreationTimestamp.Equal(&oldest.CreationTimestamp) && logicalcluster.From(crd) < logicalcluster.From(oldest)) {
			oldest = crd
		}
	}
	if oldest == nil {
		return nil, apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), name)
	}
	return oldest, nil
}

// crdEvents drops cached serving state and documents of a cluster whenever
// one of its CRDs changes.
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
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	}
}
