package apibinding

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// recheckDeletion is how soon a deleting binding whose objects are held
// by finalizers is looked at again.
const recheckDeletion = 2 * time.Second

func everything() labels.Selector { return labels.Everything() }

// finalize deletes the objects of a deleting binding's resources in its
// cluster, through the API, and releases the binding once none is left.
func (c *Controller) finalize(ctx context.Context, client *kcpclient.Clientset, b *apisv1alpha1.APIBinding) (reconciler.Result, error) {
	if !sets.New(b.Finalizers...).Has(Finalizer) {
		return reconciler.Result{}, nil
	}
	cluster := logicalcluster.From(b)
	remaining := 0
	for _, r := range b.Status.BoundResources {
		n, err := c.deleteObjects(ctx, cluster, b, r)
		if err != nil {
			return reconciler.Result{}, err
		}
		remaining += n
	}
	if remaining > 0 {
		klog.FromContext(ctx).V(2).Info("Waiting for the objects of a deleting APIBinding", "binding", b.Name, "remaining", remaining)
		return reconciler.Result{RequeueAfter: recheckDeletion}, nil
	}
	b = b.DeepCopy()
	kept := b.Finalizers[:0]
	for _, f := range b.Finalizers {
		if f != Finalizer {
			kept = append(kept, f)
		}
	}
	b.Finalizers = kept
	_, err := client.APIBindings().Update(ctx, b, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	return reconciler.Result{}, err
}

// deleteObjects deletes the objects of one bound resource in cluster and
// returns how many are left (held by finalizers, or created meanwhile).
func (c *Controller) deleteObjects(ctx context.Context, cluster logicalcluster.Name, b *apisv1alpha1.APIBinding, r apisv1alpha1.BoundAPIResource) (int, error) {
	gr := schema.GroupResource{Group: r.Group, Resource: r.Resource}
	s, err := c.schemas.Lister().Cluster(logicalcluster.Name(b.Status.APIExportClusterName)).Get(r.Schema.Name)
	if err != nil || string(s.UID) != r.Schema.UID {
		// The resource is not served any more: nothing can honour the
		// objects' finalizers; their keys go at once.
		if c.cfg.DeleteStored == nil {
			return 0, nil
		}
		return 0, c.cfg.DeleteStored(ctx, cluster, gr, r.Schema.IdentityHash)
	}
	version := ""
	for _, v := range s.Spec.Versions {
		if v.Served {
			version = v.Name
			break
		}
	}
	if version == "" {
		if c.cfg.DeleteStored == nil {
			return 0, nil
		}
		return 0, c.cfg.DeleteStored(ctx, cluster, gr, r.Schema.IdentityHash)
	}
	dyn, err := c.cfg.Dynamic.For(cluster)
	if err != nil {
		return 0, err
	}
	res := dyn.Resource(gr.WithVersion(version))
	list, err := res.List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("listing %s in %s: %w", gr, cluster, err)
	}
	left := 0
	deleted := map[string]bool{}
	for _, o := range list.Items {
		left++
		if o.GetDeletionTimestamp() != nil {
			continue
		}
		ns := o.GetNamespace()
		if ns == "" {
			if err := res.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return 0, fmt.Errorf("deleting %s %s in %s: %w", gr, o.GetName(), cluster, err)
			}
			continue
		}
		if deleted[ns] {
			continue
		}
		deleted[ns] = true
		if err := res.Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("deleting %s in namespace %s of %s: %w", gr, ns, cluster, err)
		}
	}
	if left == 0 {
		return 0, nil
	}
	// Objects without finalizers are gone now; count what is left.
	after, err := res.List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(after.Items), nil
}
