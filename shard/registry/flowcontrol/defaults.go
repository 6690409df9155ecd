package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/utils/ptr"
)

// Defaults of flowcontrol.apiserver.k8s.io/v1, as Kubernetes sets them.
const (
	defaultMatchingPrecedence         int32 = 1000
	defaultNominalConcurrencyShares   int32 = 30
	defaultQueues                     int32 = 64
	defaultHandSize                   int32 = 8
	defaultQueueLengthLimit           int32 = 50
	defaultLendablePercent            int32 = 0
	defaultExemptNominalConcurrencies int32 = 0
)

// SetFlowSchemaDefaults defaults matchingPrecedence to 1000.
func SetFlowSchemaDefaults(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = defaultMatchingPrecedence
	}
}

// SetPriorityLevelDefaults defaults a limited level's concurrency shares
// (30), lendable percent (0) and, when there is a queuing configuration,
// its 64 queues, hand size 8 and queue length limit 50, and an exempt level's shares and lendable percent (0).
func SetPriorityLevelDefaults(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if l := pl.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares == nil {
			l.NominalConcurrencyShares = ptr.To(defaultNominalConcurrencyShares)
		}
		if l.LendablePercent == nil {
			l.LendablePercent = ptr.To(defaultLendablePercent)
		}
		// As in Kubernetes, a queuing configuration is defaulted when it
		// is there, not created: a Queue response without one is invalid.
		if q := l.LimitResponse.Queuing; q != nil {
			if q.Queues == 0 {
				q.Queues = defaultQueues
			}
			if q.HandSize == 0 {
				q.HandSize = defaultHandSize
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = defaultQueueLengthLimit
			}
		}
	}
	if e := pl.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr.To(defaultExemptNominalConcurrencies)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr.To(defaultLendablePercent)
		}
	}
}
