package finalizer

import (
	"context"
	"fmt"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	upstreamfinalizer "k8s.io/apiextensions-apiserver/pkg/controller/finalizer"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// defaultPollInterval is how long the finalizer waits before it looks again
// for instances that outlived their deletion.
const defaultPollInterval = 5 * time.Second

// conflictRetryInterval is how long the finalizer waits for its cache to
// catch up after a write conflict.
const conflictRetryInterval = time.Second

// instances describes the custom resources of one resource in one logical
// cluster.
type instances struct {
	// count is the number of instances.
	count int
	// namespaces are the namespaces that hold instances; empty for
	// cluster-scoped resources.
	namespaces []string
}

// cleaner finalizes deleted CRDs. Its dependencies are plain functions so
// that it can be tested without an API server.
type cleaner struct {
	// getCRD returns a CRD of a logical cluster from the informer cache, or
	// a NotFound error.
	getCRD func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error)
	// patchStatus writes the status and finalizers of a CRD.
	patchStatus crdstatus.Patcher
	// listInstances lists the custom resources of gvr in all namespaces of
	// cluster.
	listInstances func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource) (instances, error)
	// deleteInstances deletes the custom resources of gvr in one namespace
	// of cluster, or all of them for a cluster-scoped resource (namespace
	// "").
	deleteInstances func(ctx context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) error
	// pollInterval is how long to wait for remaining instances.
	pollInterval time.Duration
}

// reconcile finalizes the CRD behind key if it is being deleted.
func (c *cleaner) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	logger := klog.FromContext(ctx)
	cached, err := c.getCRD(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting CustomResourceDefinition: %w", err)
	}
	if !needsCleanup(cached) {
		return reconciler.Result{}, nil
	}

	// Say that the cleanup, which can take a while, has begun.
	crd := cached.DeepCopy()
	apiextensionshelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionTrue,
		Reason:  "InstanceDeletionInProgress",
		Message: "CustomResource deletion is in progress",
	})
	current, err := c.patchStatus(ctx, key.Cluster, cached, crd)
	if done, result, err := writeOutcome(ctx, err); done {
		return result, err
	}

	crd = current.DeepCopy()
	switch {
	case upstreamfinalizer.OverlappingBuiltInResources()[schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural}]:
		apiextensionshelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Terminating,
			Status:  apiextensionsv1.ConditionFalse,
			Reason:  "OverlappingBuiltInResource",
			Message: "instances overlap with built-in resources in storage",
		})
	case apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established):
		remaining, cond, deleteErr := c.deleteAll(ctx, key.Cluster, crd)
		apiextensionshelpers.SetCRDCondition(crd, cond)
		if deleteErr != nil {
			if _, err := c.patchStatus(ctx, key.Cluster, current, crd); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return reconciler.Result{}, utilerrors.NewAggregate([]error{deleteErr, err})
			}
			return reconciler.Result{}, deleteErr
		}
		if remaining > 0 {
			logger.V(2).Info("Waiting for custom resources to be removed", "count", remaining)
			return reconciler.Result{RequeueAfter: c.pollInterval}, nil
		}
	default:
		apiextensionshelpers.SetCRDCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Terminating,
			Status:  apiextensionsv1.ConditionFalse,
			Reason:  "NeverEstablished",
			Message: "resource was never established",
		})
	}

	apiextensionshelpers.CRDRemoveFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer)
	_, err = c.patchStatus(ctx, key.Cluster, current, crd)
	if done, result, err := writeOutcome(ctx, err); done {
		return result, err
	}
	logger.V(2).Info("Removed the custom resource cleanup finalizer")
	return reconciler.Result{}, nil
}

// writeOutcome tells whether a reconcile ends after a status write that
// returned err, and with which result and error. NotFound ends it: the CRD
// is gone. Conflict ends it with a short requeue: the cache was behind, and
// the event that brings it up to date may be one the event handler ignores.
func writeOutcome(ctx context.Context, err error) (bool, reconciler.Result, error) {
	switch {
	case err == nil:
		return false, reconciler.Result{}, nil
	case apierrors.IsNotFound(err):
		return true, reconciler.Result{}, nil
	case apierrors.IsConflict(err):
		klog.FromContext(ctx).V(4).Info("CustomResourceDefinition changed while finalizing it, trying again", "err", err)
		return true, reconciler.Result{RequeueAfter: conflictRetryInterval}, nil
	default:
		return true, reconciler.Result{}, err
	}
}

// needsCleanup tells whether crd is being deleted and still has the
// cleanup finalizer.
func needsCleanup(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return !crd.DeletionTimestamp.IsZero() && apiextensionshelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer)
}

// deleteAll deletes the instances of crd in cluster. It returns how many
// are left and the Terminating condition to report; an error means the
// deletion failed and is to be retried.
func (c *cleaner) deleteAll(ctx context.Context, cluster logicalcluster.Name, crd *apiextensionsv1.CustomResourceDefinition) (int, apiextensionsv1.CustomResourceDefinitionCondition, error) {
	failed := func(format string, err error) (int, apiextensionsv1.CustomResourceDefinitionCondition, error) {
		return 0, apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Terminating,
			Status:  apiextensionsv1.ConditionTrue,
			Reason:  "InstanceDeletionFailed",
			Message: fmt.Sprintf(format, err),
		}, err
	}

	gvr, found, err := c.list(ctx, cluster, crd)
	if err != nil {
		return failed("could not list instances: %v", err)
	}
	if found.count > 0 {
		namespaces := found.namespaces
		if crd.Spec.Scope == apiextensionsv1.ClusterScoped {
			namespaces = []string{""}
		}
		var errs []error
		for _, ns := range namespaces {
			if err := c.deleteInstances(ctx, cluster, gvr, ns); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			return failed("could not issue all deletes: %v", err)
		}
		if found, err = c.listInstances(ctx, cluster, gvr); err != nil {
			return failed("could not list instances: %v", err)
		}
	}
	if found.count > 0 {
		return found.count, apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Terminating,
			Status:  apiextensionsv1.ConditionTrue,
			Reason:  "InstanceDeletionInProgress",
			Message: "CustomResource deletion is in progress",
		}, nil
	}
	return 0, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionFalse,
		Reason:  "InstanceDeletionCompleted",
		Message: "removed all instances",
	}, nil
}

// list lists the instances of crd through its first served version that
// answers, the storage version first, and returns that version's resource.
func (c *cleaner) list(ctx context.Context, cluster logicalcluster.Name, crd *apiextensionsv1.CustomResourceDefinition) (schema.GroupVersionResource, instances, error) {
	versions := servedVersions(crd)
	if len(versions) == 0 {
		return schema.GroupVersionResource{}, instances{}, reconciler.TerminalError(fmt.Errorf("%s.%s serves no version to delete its instances through; serve one to finish the deletion", crd.Spec.Names.Plural, crd.Spec.Group))
	}
	var errs []error
	for _, v := range versions {
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v, Resource: crd.Spec.Names.Plural}
		found, err := c.listInstances(ctx, cluster, gvr)
		if err == nil {
			return gvr, found, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", gvr, err))
		if !apierrors.IsNotFound(err) {
			break
		}
	}
	return schema.GroupVersionResource{}, instances{}, utilerrors.NewAggregate(errs)
}

// servedVersions returns the names of the served versions of crd, the
// storage version first.
func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	var versions []string
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Storage {
			versions = append([]string{v.Name}, versions...)
		} else {
			versions = append(versions, v.Name)
		}
	}
	return versions
}
