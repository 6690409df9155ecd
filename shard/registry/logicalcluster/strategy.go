// Package logicalcluster serves core.kcp.io/v1alpha1 LogicalClusters: the
// singleton object named "cluster" whose existence defines a logical cluster.
package logicalcluster

import (
	"context"
	"fmt"
	"maps"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Finalizer keeps a deleted LogicalCluster until every object of its logical
// cluster is gone.
const Finalizer = "core.kcp.io/logicalcluster-deletion"

// strategy is the create, update and delete strategy of LogicalClusters.
// Writes keep the status, which only the status subresource changes.
type strategy struct {
	store.Strategy[*corev1alpha1.LogicalCluster]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate)}
}

func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1alpha1.SchemeGroupVersion, "status")
}

// PrepareForCreate starts the logical cluster in phase Initializing with the
// initializers of its spec, or Ready when it has none.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	lc := obj.(*corev1alpha1.LogicalCluster)
	lc.Status = corev1alpha1.LogicalClusterStatus{}
	lc.Status.Initializers = append([]corev1alpha1.LogicalClusterInitializer(nil), lc.Spec.Initializers...)
	if len(lc.Status.Initializers) > 0 {
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
	} else {
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	}
	if !hasFinalizer(lc.Finalizers) {
		lc.Finalizers = append(lc.Finalizers, Finalizer)
	}
	syncInitializerLabels(lc)
}

// syncInitializerLabels makes the initializer labels of lc name exactly
// the initializers left in its status; users cannot set or remove them.
func syncInitializerLabels(lc *corev1alpha1.LogicalCluster) {
	for k := range lc.Labels {
		if strings.HasPrefix(k, corev1alpha1.InitializerLabelPrefix) {
			delete(lc.Labels, k)
		}
	}
	for _, in := range lc.Status.Initializers {
		if lc.Labels == nil {
			lc.Labels = map[string]string{}
		}
		lc.Labels[corev1alpha1.InitializerLabelKey(in)] = corev1alpha1.InitializerLabelValue(in)
	}
	if len(lc.Labels) == 0 {
		lc.Labels = nil
	}
}

func hasFinalizer(fs []string) bool {
	for _, f := range fs {
		if f == Finalizer {
			return true
		}
	}
	return false
}

func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	lc := obj.(*corev1alpha1.LogicalCluster)
	lc.Status = old.(*corev1alpha1.LogicalCluster).Status
	syncInitializerLabels(lc)
}

// validate validates a new LogicalCluster: it must be named "cluster".
func validate(lc *corev1alpha1.LogicalCluster) field.ErrorList {
	errs := validation.ValidateObjectMeta(&lc.ObjectMeta, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if lc.Name != corev1alpha1.LogicalClusterName {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), lc.Name,
			fmt.Sprintf("the LogicalCluster of a logical cluster must be named %q", corev1alpha1.LogicalClusterName)))
	}
	if p, ok := lc.Annotations[logicalcluster.PathAnnotationKey]; ok && !logicalcluster.IsValidPath(p) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(logicalcluster.PathAnnotationKey), p, logicalcluster.ValidationMessage))
	}
	return append(errs, validateSpec(&lc.Spec, field.NewPath("spec"))...)
}

func validateSpec(spec *corev1alpha1.LogicalClusterSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if o := spec.Owner; o != nil {
		op := p.Child("owner")
		for name, v := range map[string]string{"apiVersion": o.APIVersion, "resource": o.Resource, "name": o.Name, "cluster": o.Cluster, "uid": string(o.UID)} {
			if v == "" {
				errs = append(errs, field.Required(op.Child(name), ""))
			}
		}
	}
	seen := map[corev1alpha1.LogicalClusterInitializer]bool{}
	for i, in := range spec.Initializers {
		if in == "" {
			errs = append(errs, field.Required(p.Child("initializers").Index(i), ""))
		}
		if seen[in] {
			errs = append(errs, field.Duplicate(p.Child("initializers").Index(i), in))
		}
		seen[in] = true
	}
	return errs
}

// validateUpdate validates an update: the owner and the initializers of
// the spec cannot change.
func validateUpdate(lc, oldLC *corev1alpha1.LogicalCluster) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&lc.ObjectMeta, &oldLC.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateSpec(&lc.Spec, field.NewPath("spec"))...)
	if !apiequality.Semantic.DeepEqual(lc.Spec.Owner, oldLC.Spec.Owner) && oldLC.Spec.Owner != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "owner"), "the owner of a logical cluster cannot change"))
	}
	if !apiequality.Semantic.DeepEqual(lc.Spec.Initializers, oldLC.Spec.Initializers) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "initializers"), "initializers are immutable"))
	}
	return errs
}

// statusStrategy updates status only. Initializers can only be removed, and
// the logical cluster becomes Ready when the last one is gone.
type statusStrategy struct{ strategy }

func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(corev1alpha1.SchemeGroupVersion, "spec", "metadata.labels", "metadata.annotations")
}

func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	lc, oldLC := obj.(*corev1alpha1.LogicalCluster), old.(*corev1alpha1.LogicalCluster)
	lc.Spec = oldLC.Spec
	lc.Labels, lc.Annotations = maps.Clone(oldLC.Labels), oldLC.Annotations
	if lc.Status.Phase == corev1alpha1.LogicalClusterPhaseInitializing && len(lc.Status.Initializers) == 0 {
		lc.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
	}
	syncInitializerLabels(lc)
}

func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	lc, oldLC := obj.(*corev1alpha1.LogicalCluster), old.(*corev1alpha1.LogicalCluster)
	errs := validation.ValidateObjectMetaUpdate(&lc.ObjectMeta, &oldLC.ObjectMeta, field.NewPath("metadata"))
	had := map[corev1alpha1.LogicalClusterInitializer]bool{}
	for _, in := range oldLC.Status.Initializers {
		had[in] = true
	}
	for i, in := range lc.Status.Initializers {
		if !had[in] {
			errs = append(errs, field.Forbidden(field.NewPath("status", "initializers").Index(i), "initializers can only be removed"))
		}
	}
	switch lc.Status.Phase {
	case "", corev1alpha1.LogicalClusterPhaseScheduling, corev1alpha1.LogicalClusterPhaseInitializing,
		corev1alpha1.LogicalClusterPhaseReady, corev1alpha1.LogicalClusterPhaseUnavailable:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("status", "phase"), lc.Status.Phase,
			[]corev1alpha1.LogicalClusterPhaseType{corev1alpha1.LogicalClusterPhaseScheduling, corev1alpha1.LogicalClusterPhaseInitializing,
				corev1alpha1.LogicalClusterPhaseReady, corev1alpha1.LogicalClusterPhaseUnavailable}))
	}
	if lc.Status.Phase == corev1alpha1.LogicalClusterPhaseReady && len(lc.Status.Initializers) > 0 {
		errs = append(errs, field.Invalid(field.NewPath("status", "phase"), lc.Status.Phase, "a logical cluster with initializers left cannot be Ready"))
	}
	return errs
}

// GetAttrs returns labels and fields for selectors.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	return store.Attrs(obj, func(lc *corev1alpha1.LogicalCluster) fields.Set {
		return fields.Set{"metadata.name": lc.Name, "status.phase": string(lc.Status.Phase)}
	})
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
