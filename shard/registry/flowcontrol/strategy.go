package flowcontrol

import (
	"context"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/registry/store"
)

// ConfigCluster is the logical cluster that configures API Priority and
// Fairness for the whole shard.
const ConfigCluster = logicalcluster.SystemAdmin

// inConfigCluster refuses writes in any other cluster than ConfigCluster:
// there they would be stored and never used.
func inConfigCluster(ctx context.Context) field.ErrorList {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if ok && !c.Wildcard && c.Name == ConfigCluster {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata"),
		"API Priority and Fairness is configured for the whole shard, in the logical cluster "+string(ConfigCluster)+"; this cluster only reads it")}
}

// FlowSchemaStrategy implements the create, update and delete behaviour of
// FlowSchemas. Writes keep the status, which the shard's APF controller
// owns.
type FlowSchemaStrategy struct {
	store.Strategy[*flowcontrolv1.FlowSchema]
}

// NewFlowSchemaStrategy returns the strategy of FlowSchemas.
func NewFlowSchemaStrategy(typer runtime.ObjectTyper) FlowSchemaStrategy {
	return FlowSchemaStrategy{store.NewStrategy(typer, store.ClusterScoped, ValidateFlowSchema, ValidateFlowSchemaUpdate)}
}

// Validate validates a new FlowSchema in the configuring cluster.
func (s FlowSchemaStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	if errs := inConfigCluster(ctx); errs != nil {
		return errs
	}
	return s.Strategy.Validate(ctx, obj)
}

// ValidateUpdate validates an update in the configuring cluster.
func (s FlowSchemaStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if errs := inConfigCluster(ctx); errs != nil {
		return errs
	}
	return s.Strategy.ValidateUpdate(ctx, obj, old)
}

// GetResetFields returns the fields writes reset: status.
func (FlowSchemaStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(flowcontrolv1.SchemeGroupVersion, "status")
}

// PrepareForCreate clears the status and starts the generation at 1.
func (FlowSchemaStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	fs := obj.(*flowcontrolv1.FlowSchema)
	fs.Status = flowcontrolv1.FlowSchemaStatus{}
	fs.Generation = 1
}

// PrepareForUpdate keeps the stored status, and bumps the generation when
// the spec changes.
func (FlowSchemaStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	fs, oldFS := obj.(*flowcontrolv1.FlowSchema), old.(*flowcontrolv1.FlowSchema)
	fs.Status = oldFS.Status
	fs.Generation = oldFS.Generation
	if !equality.Semantic.DeepEqual(fs.Spec, oldFS.Spec) {
		fs.Generation++
	}
}

// FlowSchemaStatusStrategy updates the status only.
type FlowSchemaStatusStrategy struct {
	FlowSchemaStrategy
}

// GetResetFields returns the fields status writes reset: spec.
func (FlowSchemaStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(flowcontrolv1.SchemeGroupVersion, "spec")
}

// PrepareForUpdate keeps the stored spec.
func (FlowSchemaStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*flowcontrolv1.FlowSchema).Spec = old.(*flowcontrolv1.FlowSchema).Spec
}

// ValidateUpdate validates a status update in the configuring cluster.
func (FlowSchemaStatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if errs := inConfigCluster(ctx); errs != nil {
		return errs
	}
	return ValidateFlowSchemaStatusUpdate(obj.(*flowcontrolv1.FlowSchema), old.(*flowcontrolv1.FlowSchema))
}

// PriorityLevelStrategy implements the create, update and delete
// behaviour of PriorityLevelConfigurations.
type PriorityLevelStrategy struct {
	store.Strategy[*flowcontrolv1.PriorityLevelConfiguration]
}

// NewPriorityLevelStrategy returns the strategy of
// PriorityLevelConfigurations.
func NewPriorityLevelStrategy(typer runtime.ObjectTyper) PriorityLevelStrategy {
	return PriorityLevelStrategy{store.NewStrategy(typer, store.ClusterScoped, ValidatePriorityLevel, ValidatePriorityLevelUpdate)}
}

// Validate validates a new level in the configuring cluster.
func (s PriorityLevelStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	if errs := inConfigCluster(ctx); errs != nil {
		return errs
	}
	return s.Strategy.Validate(ctx, obj)
}

// ValidateUpdate validates an update in the configuring cluster.
func (s PriorityLevelStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if errs := inConfigCluster(ctx); errs != nil {
		return errs
	}
	return s.Strategy.ValidateUpdate(ctx, obj, old)
}

// GetResetFields returns the fields writes reset: status.
func (PriorityLevelStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(flowcontrolv1.SchemeGroupVersion, "status")
}

// PrepareForCreate clears the status and starts the generation at 1.
func (PriorityLevelStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	pl := obj.(*flowcontrolv1.PriorityLevelConfiguration)
	pl.Status = flowcontrolv1.PriorityLevelConfigurationStatus{}
	pl.Generation = 1
}

// PrepareForUpdate keeps the stored status, and bumps the generation when
// the spec changes.
func (PriorityLevelStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	pl, oldPL := obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration)
	pl.Status = oldPL.Status
	pl.Generation = oldPL.Generation
	if !equality.Semantic.DeepEqual(pl.Spec, oldPL.Spec) {
		pl.Generation++
	}
}

// PriorityLevelStatusStrategy updates the status only.
type PriorityLevelStatusStrategy struct {
	PriorityLevelStrategy
}

// GetResetFields returns the fields status writes reset: spec.
func (PriorityLevelStatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(flowcontrolv1.SchemeGroupVersion, "spec")
}

// PrepareForUpdate keeps the stored spec.
func (PriorityLevelStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*flowcontrolv1.PriorityLevelConfiguration).Spec = old.(*flowcontrolv1.PriorityLevelConfiguration).Spec
}

// ValidateUpdate validates a status update in the configuring cluster.
func (PriorityLevelStatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if errs := inConfigCluster(ctx); errs != nil {
		return errs
	}
	return ValidatePriorityLevelStatusUpdate(obj.(*flowcontrolv1.PriorityLevelConfiguration), old.(*flowcontrolv1.PriorityLevelConfiguration))
}
