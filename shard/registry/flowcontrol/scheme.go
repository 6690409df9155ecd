// Package flowcontrol is the registry of flowcontrol.apiserver.k8s.io/v1
// flowschemas and prioritylevelconfigurations: scheme registration,
// defaulting, strategies, validation, storage and table printing.
//
// API Priority and Fairness is configured for a whole shard, in the
// system:admin logical cluster; other clusters serve the resources read
// only (always empty), and writes there are refused.
package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers the kinds as flowcontrol.apiserver.k8s.io/v1 kinds
// and as kinds of the group's internal version, their defaulting, and
// their field selector labels.
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, flowcontrolv1.SchemeGroupVersion,
		&flowcontrolv1.FlowSchema{}, &flowcontrolv1.FlowSchemaList{},
		&flowcontrolv1.PriorityLevelConfiguration{}, &flowcontrolv1.PriorityLevelConfigurationList{},
	)
	store.AddDefaulting(s, SetFlowSchemaDefaults, func(l *flowcontrolv1.FlowSchemaList) []flowcontrolv1.FlowSchema { return l.Items })
	store.AddDefaulting(s, SetPriorityLevelDefaults, func(l *flowcontrolv1.PriorityLevelConfigurationList) []flowcontrolv1.PriorityLevelConfiguration {
		return l.Items
	})
	return store.AddFieldLabels(s, flowcontrolv1.SchemeGroupVersion, runtime.DefaultMetaV1FieldSelectorConversion,
		"FlowSchema", "PriorityLevelConfiguration")
}
