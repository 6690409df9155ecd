// Package partitionsets serves topology.kcp.io/v1alpha1 PartitionSets:
// dimensions (Shard label keys) and a shard selector, from which the
// partitionset controller generates one Partition per combination of
// dimension values that some selected shard has.
//
// Like kcp, which serves them as a CRD with a status subresource, writes of
// the set keep the status and bump the generation when the spec changes,
// and writes of the status keep everything else. The shard selector is
// validated as kcp's schema does (label keys and non-empty label values,
// operators and their values, at most ten labels and ten expressions);
// each dimension must be a label key, which kcp does not check but which
// no shard label could otherwise match.
package partitionsets

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// maxSelectorTerms is how many matchLabels and how many matchExpressions
// kcp's schema allows in a shard selector (it limits the cost of its CEL
// rules).
const maxSelectorTerms = 10

// strategy is the create, update and delete strategy of partition sets.
// Writes keep the status, which only the status subresource changes.
type strategy struct {
	store.WithStatus[*topologyv1alpha1.PartitionSet]
}

func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{store.NewWithStatus(store.NewStrategy(typer, store.ClusterScoped, validate, validateUpdate), topologyv1alpha1.SchemeGroupVersion, parts)}
}

// parts returns the metadata, spec and status of a PartitionSet.
func parts(s *topologyv1alpha1.PartitionSet) (*metav1.ObjectMeta, *topologyv1alpha1.PartitionSetSpec, *topologyv1alpha1.PartitionSetStatus) {
	return &s.ObjectMeta, &s.Spec, &s.Status
}

// validate validates a new partition set.
func validate(s *topologyv1alpha1.PartitionSet) field.ErrorList {
	errs := validation.ValidateObjectMeta(&s.ObjectMeta, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateUpdate validates an update; dimensions and selector may change.
func validateUpdate(s, old *topologyv1alpha1.PartitionSet) field.ErrorList {
	errs := validation.ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateSpec(&s.Spec, field.NewPath("spec"))...)
}

// validateSpec validates the dimensions, each a label key, and the shard
// selector (validateShardSelector). A dimension listed twice counts once,
// as in kcp.
func validateSpec(spec *topologyv1alpha1.PartitionSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, d := range spec.Dimensions {
		if msgs := utilvalidation.IsQualifiedName(d); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("dimensions").Index(i), d, strings.Join(msgs, "; ")))
		}
	}
	return append(errs, validateShardSelector(spec.ShardSelector, p.Child("shardSelector"))...)
}

// validateShardSelector validates a shard selector as kcp's schema does:
// a valid label selector, at most maxSelectorTerms labels and expressions,
// and no empty value (kcp's patterns for values need one character).
func validateShardSelector(sel *metav1.LabelSelector, p *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)
	if n := len(sel.MatchLabels); n > maxSelectorTerms {
		errs = append(errs, field.TooMany(p.Child("matchLabels"), n, maxSelectorTerms))
	}
	if n := len(sel.MatchExpressions); n > maxSelectorTerms {
		errs = append(errs, field.TooMany(p.Child("matchExpressions"), n, maxSelectorTerms))
	}
	for k, v := range sel.MatchLabels {
		if v == "" {
			errs = append(errs, field.Invalid(p.Child("matchLabels").Key(k), v, "must not be empty"))
		}
	}
	for i, r := range sel.MatchExpressions {
		for j, v := range r.Values {
			if v == "" {
				errs = append(errs, field.Invalid(p.Child("matchExpressions").Index(i).Child("values").Index(j), v, "must not be empty"))
			}
		}
	}
	return errs
}

// statusStrategy updates the status only.
type statusStrategy struct{ strategy }

// GetResetFields: a status write keeps the spec and the metadata.
func (s statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.StatusResetFields()
}

// PrepareForUpdate keeps the stored spec and metadata, except the managed
// fields the write changed.
func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	s.PrepareForStatusUpdate(ctx, obj, old)
}

// ValidateUpdate validates a status write: the status has no rule of its
// own in kcp's schema.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	s, oldS := obj.(*topologyv1alpha1.PartitionSet), old.(*topologyv1alpha1.PartitionSet)
	return validation.ValidateObjectMetaUpdate(&s.ObjectMeta, &oldS.ObjectMeta, field.NewPath("metadata"))
}

var _ rest.RESTCreateStrategy = strategy{}
var _ rest.RESTUpdateStrategy = statusStrategy{}
