package namespaces

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storageerr "k8s.io/apiserver/pkg/storage/errors"
	"k8s.io/apiserver/pkg/util/dryrun"
)

// Delete deletes a namespace in two phases, as Kubernetes does. The first
// delete marks the namespace: it sets metadata.deletionTimestamp and the
// Terminating phase, and returns the namespace. Later deletes change nothing
// while spec.finalizers is not empty. The namespace is removed by a delete,
// or by the update that empties the last finalizer list, once both
// metadata.finalizers and spec.finalizers are empty.
//
// The delete is checked against the UID and resourceVersion preconditions
// of options; a delete without UID precondition is bound to the UID of the
// namespace it read, so it never marks a namespace recreated meanwhile.
func (r *REST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	ns := obj.(*corev1.Namespace)

	if options == nil {
		options = metav1.NewDeleteOptions(0)
	} else {
		options = options.DeepCopy()
	}
	if options.Preconditions == nil {
		options.Preconditions = &metav1.Preconditions{}
	}
	if options.Preconditions.UID == nil {
		options.Preconditions.UID = &ns.UID
	} else if *options.Preconditions.UID != ns.UID {
		return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *options.Preconditions.UID, ns.UID))
	}
	if rv := options.Preconditions.ResourceVersion; rv != nil && *rv != ns.ResourceVersion {
		return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
			fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *rv, ns.ResourceVersion))
	}

	if ns.DeletionTimestamp.IsZero() {
		return r.markTerminating(ctx, name, deleteValidation, options)
	}
	if len(ns.Spec.Finalizers) != 0 {
		// Already terminating; the namespace controller finishes the job.
		return ns, false, nil
	}
	return r.store.Delete(ctx, name, deleteValidation, options)
}

// markTerminating sets the deletion timestamp and the Terminating phase of
// a namespace, and the garbage collection finalizers options ask for.
func (r *REST) markTerminating(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	key, err := r.store.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	preconditions := storage.Preconditions{UID: options.Preconditions.UID, ResourceVersion: options.Preconditions.ResourceVersion}
	out := r.store.NewFunc()
	err = r.store.Storage.GuaranteedUpdate(ctx, key, out, false, &preconditions,
		storage.SimpleUpdate(func(existing runtime.Object) (runtime.Object, error) {
			ns, ok := existing.(*corev1.Namespace)
			if !ok {
				return nil, fmt.Errorf("expected a namespace, got %T", existing)
			}
			if deleteValidation != nil {
				if err := deleteValidation(ctx, ns); err != nil {
					return nil, err
				}
			}
			if ns.DeletionTimestamp.IsZero() {
				now := metav1.Now()
				ns.DeletionTimestamp = &now
			}
			ns.Status.Phase = corev1.NamespaceTerminating
			ns.Finalizers = gcFinalizers(ns.Finalizers, options)
			return ns, nil
		}),
		dryrun.IsDryRun(options.DryRun), nil)
	if err != nil {
		err = storageerr.InterpretGetError(err, corev1.Resource("namespaces"), name)
		err = storageerr.InterpretUpdateError(err, corev1.Resource("namespaces"), name)
		if _, ok := err.(*apierrors.StatusError); !ok {
			err = apierrors.NewInternalError(err)
		}
		return nil, false, err
	}
	return out, false, nil
}

// gcFinalizers returns finalizers with the orphan and foregroundDeletion
// finalizers added or removed as the propagation policy of options asks;
// without a policy, existing ones are kept.
func gcFinalizers(finalizers []string, options *metav1.DeleteOptions) []string {
	want := map[string]bool{}
	//nolint:staticcheck // OrphanDependents is deprecated but still honoured.
	orphan := options.OrphanDependents
	switch {
	case orphan != nil:
		want[metav1.FinalizerOrphanDependents] = *orphan
		want[metav1.FinalizerDeleteDependents] = !*orphan
	case options.PropagationPolicy != nil:
		want[metav1.FinalizerOrphanDependents] = *options.PropagationPolicy == metav1.DeletePropagationOrphan
		want[metav1.FinalizerDeleteDependents] = *options.PropagationPolicy == metav1.DeletePropagationForeground
	default:
		return finalizers
	}

	result := make([]string, 0, len(finalizers)+1)
	for _, f := range finalizers {
		if keep, decided := want[f]; decided && !keep {
			continue
		}
		result = append(result, f)
		delete(want, f) // already present
	}
	for _, f := range []string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents} {
		if want[f] {
			result = append(result, f)
		}
	}
	return result
}
