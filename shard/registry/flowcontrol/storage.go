package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"github.com/tessera-dev/tessera/shard/registry/store"
	"github.com/tessera-dev/tessera/shard/registry/subresource"
)

// NewFlowSchemaREST returns the storage of FlowSchemas and of their status.
func NewFlowSchemaREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, *subresource.REST, error) {
	strategy := NewFlowSchemaStrategy(scheme)
	schemas, err := store.NewREST(optsGetter, store.Options{
		Resource:       flowcontrolv1.Resource("flowschemas"),
		Singular:       "flowschema",
		NewFunc:        func() runtime.Object { return &flowcontrolv1.FlowSchema{} },
		NewListFunc:    func() runtime.Object { return &flowcontrolv1.FlowSchemaList{} },
		Strategy:       strategy,
		TableConvertor: FlowSchemaTableConvertor(),
	})
	if err != nil {
		return nil, nil, err
	}
	return schemas, subresource.New(schemas.Store, FlowSchemaStatusStrategy{strategy}), nil
}

// NewPriorityLevelREST returns the storage of PriorityLevelConfigurations
// and of their status.
func NewPriorityLevelREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*store.REST, *subresource.REST, error) {
	strategy := NewPriorityLevelStrategy(scheme)
	levels, err := store.NewREST(optsGetter, store.Options{
		Resource:       flowcontrolv1.Resource("prioritylevelconfigurations"),
		Singular:       "prioritylevelconfiguration",
		NewFunc:        func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
		NewListFunc:    func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
		Strategy:       strategy,
		TableConvertor: PriorityLevelTableConvertor(),
	})
	if err != nil {
		return nil, nil, err
	}
	return levels, subresource.New(levels.Store, PriorityLevelStatusStrategy{strategy}), nil
}
