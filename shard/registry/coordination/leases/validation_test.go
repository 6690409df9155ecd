package leases

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func newLease(mutate ...func(*coordinationv1.Lease)) *coordinationv1.Lease {
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "controller", Namespace: "kube-system", ResourceVersion: "1"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("shard-1_abc"),
			LeaseDurationSeconds: ptr.To[int32](15),
			LeaseTransitions:     ptr.To[int32](0),
			AcquireTime:          ptr.To(metav1.NewMicroTime(time.Now())),
		},
	}
	for _, m := range mutate {
		m(l)
	}
	return l
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		lease     *coordinationv1.Lease
		wantField string
	}{
		{name: "valid", lease: newLease()},
		{name: "empty spec", lease: newLease(func(l *coordinationv1.Lease) { l.Spec = coordinationv1.LeaseSpec{} })},
		{name: "strategy and preferred holder", lease: newLease(func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To(coordinationv1.OldestEmulationVersion)
			l.Spec.PreferredHolder = ptr.To("shard-2")
		})},
		{name: "custom strategy", lease: newLease(func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("example.com/round-robin"))
		})},
		{name: "zero duration", lease: newLease(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](0) }), wantField: "spec.leaseDurationSeconds"},
		{name: "negative transitions", lease: newLease(func(l *coordinationv1.Lease) { l.Spec.LeaseTransitions = ptr.To[int32](-1) }), wantField: "spec.leaseTransitions"},
		{name: "unknown strategy", lease: newLease(func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("Random"))
		}), wantField: "spec.strategy.strategy"},
		{name: "custom strategy, not a qualified name", lease: newLease(func(l *coordinationv1.Lease) {
			l.Spec.Strategy = ptr.To(coordinationv1.CoordinatedLeaseStrategy("example.com/a/b"))
		}), wantField: "spec.strategy.strategy"},
		{name: "preferred holder without strategy", lease: newLease(func(l *coordinationv1.Lease) { l.Spec.PreferredHolder = ptr.To("shard-2") }), wantField: "spec.preferredHolder"},
		{name: "bad name", lease: newLease(func(l *coordinationv1.Lease) { l.Name = "Controller" }), wantField: "metadata.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.lease)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want valid, got %v", errs)
				}
				return
			}
			if len(errs) == 0 || errs[0].Field != tt.wantField {
				t.Fatalf("want first error on %q, got %v", tt.wantField, errs)
			}
		})
	}
	renewed := newLease(func(l *coordinationv1.Lease) { l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now())) })
	if errs := ValidateUpdate(renewed, newLease()); len(errs) != 0 {
		t.Errorf("renewing: %v", errs)
	}
	if errs := ValidateUpdate(newLease(func(l *coordinationv1.Lease) { l.Spec.LeaseDurationSeconds = ptr.To[int32](-5) }), newLease()); len(errs) == 0 {
		t.Error("invalid update: want an error")
	}
}
