package namespace

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// contentClient reaches the objects of one namespace of one logical
// cluster. Errors are API errors; NotFound for a resource that is no longer
// served.
type contentClient struct {
	// deleteCollection deletes every object of a resource in a namespace
	// with background propagation.
	deleteCollection func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) error
	// list lists the objects of a resource in a namespace.
	list func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) ([]metav1.PartialObjectMetadata, error)
	// deleteObject deletes one object, only if it still has uid, with
	// background propagation.
	deleteObject func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace, name string, uid types.UID) error
}

// leftovers is what remains of a resource in a namespace after a deletion
// pass.
type leftovers struct {
	// count is the number of objects left.
	count int
	// finalizers counts the objects left that carry each finalizer.
	finalizers map[string]int
}

// deleteContent deletes every object of r in namespace, with
// deletecollection if r supports it, else one by one, and lists what is
// left. A resource that is no longer served has nothing left.
func (c contentClient) deleteContent(ctx context.Context, cluster logicalcluster.Name, namespace string, r resource) (leftovers, error) {
	logger := klog.FromContext(ctx).WithValues("resource", r.GroupVersionResource.String())
	oneByOne := !r.deleteCollection
	if r.deleteCollection {
		err := c.deleteCollection(ctx, cluster, r.GroupVersionResource, namespace)
		switch {
		case err == nil:
			logger.V(4).Info("Deleted collection")
		case apierrors.IsNotFound(err):
			return leftovers{}, nil
		case apierrors.IsMethodNotSupported(err):
			oneByOne = true
		default:
			return leftovers{}, fmt.Errorf("deleting collection: %w", err)
		}
	}

	items, err := c.list(ctx, cluster, r.GroupVersionResource, namespace)
	if apierrors.IsNotFound(err) {
		return leftovers{}, nil
	}
	if err != nil {
		return leftovers{}, fmt.Errorf("listing: %w", err)
	}
	if oneByOne && len(items) > 0 {
		var errs []error
		for _, item := range items {
			if item.DeletionTimestamp != nil {
				continue
			}
			err := c.deleteObject(ctx, cluster, r.GroupVersionResource, namespace, item.Name, item.UID)
			// Gone, or replaced by another object that this pass or the
			// next deletes.
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				errs = append(errs, fmt.Errorf("deleting %s: %w", item.Name, err))
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			return leftovers{}, err
		}
		logger.V(4).Info("Deleted objects one by one", "count", len(items))
		if items, err = c.list(ctx, cluster, r.GroupVersionResource, namespace); apierrors.IsNotFound(err) {
			return leftovers{}, nil
		} else if err != nil {
			return leftovers{}, fmt.Errorf("listing: %w", err)
		}
	}

	left := leftovers{count: len(items)}
	for _, item := range items {
		for _, f := range item.Finalizers {
			if left.finalizers == nil {
				left.finalizers = map[string]int{}
			}
			left.finalizers[f]++
		}
	}
	return left, nil
}
