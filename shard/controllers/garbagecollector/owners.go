package garbagecollector

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// ownerLookup reads the object an owner reference points to from the API
// server, resolving its kind with the built-in kinds and the CRDs of the
// reference's logical cluster.
type ownerLookup struct {
	builtins *builtins
	// cachedCRDs returns the CRDs of a logical cluster from a cache.
	cachedCRDs func(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error)
	// liveCRDs returns the CRDs of a logical cluster from the API server.
	liveCRDs func(ctx context.Context, cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error)
	// served finds gvk in the discovery of a logical cluster on the API
	// server: kinds no CRD of the cluster defines, such as resources bound
	// through APIBindings.
	served func(ctx context.Context, cluster logicalcluster.Name, gvk schema.GroupVersionKind) (kindInfo, bool, error)
	// get reads an object's metadata from the API server.
	get func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace, name string) (*metav1.PartialObjectMetadata, error)
}

// getOwner implements collector.getOwner.
func (l *ownerLookup) getOwner(ctx context.Context, cluster logicalcluster.Name, namespace string, ref metav1.OwnerReference) (*metav1.PartialObjectMetadata, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		// No object can have a malformed apiVersion.
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: ref.Kind}, ref.Name)
	}
	gvk := gv.WithKind(ref.Kind)
	info, ok, err := l.resolve(ctx, cluster, gvk)
	if err != nil {
		return nil, err
	}
	if !ok {
		// The logical cluster serves no such kind, so no such owner exists.
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name)
	}
	if !info.namespaced {
		namespace = ""
	} else if namespace == "" {
		// A cluster-scoped dependent cannot have a namespaced owner.
		return nil, apierrors.NewNotFound(info.resource.GroupResource(), ref.Name)
	}
	return l.get(ctx, cluster, info.resource, namespace, ref.Name)
}

// resolve returns where objects of gvk live in cluster. A kind that neither
// the built-ins nor the cached CRDs know is looked up in the cluster's CRDs
// on the API server, since the cache may miss a CRD created just now, and
// then in the cluster's discovery (bound resources).
func (l *ownerLookup) resolve(ctx context.Context, cluster logicalcluster.Name, gvk schema.GroupVersionKind) (kindInfo, bool, error) {
	if info, ok := l.builtins.kinds[gvk.GroupKind()]; ok {
		return info, true, nil
	}
	crds, err := l.cachedCRDs(cluster)
	if err != nil {
		return kindInfo{}, false, fmt.Errorf("listing cached CRDs: %w", err)
	}
	if info, ok := crdKind(crds, gvk); ok {
		return info, true, nil
	}
	crds, err = l.liveCRDs(ctx, cluster)
	if err != nil {
		return kindInfo{}, false, fmt.Errorf("listing CRDs: %w", err)
	}
	if info, ok := crdKind(crds, gvk); ok {
		return info, true, nil
	}
	// Not a CRD of the cluster: a resource bound through an APIBinding is
	// served all the same, and its owners must not be taken for gone.
	if l.served == nil {
		return kindInfo{}, false, nil
	}
	return l.served(ctx, cluster, gvk)
}
