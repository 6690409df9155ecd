package server

import (
	"context"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestStartGateHoldsUsersUntilTheCachesSynced(t *testing.T) {
	g := newStartGate()
	allow := authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionAllow, "", nil
	})
	a := g.wrap(allow)
	attrs := func(groups ...string) authorizer.Attributes {
		return authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "u", Groups: groups}, Verb: "create", Resource: "configmaps", ResourceRequest: true}
	}

	// Shard admins (the loopback client the informers list with) pass.
	if d, _, err := a.Authorize(t.Context(), attrs(user.SystemPrivilegedGroup)); d != authorizer.DecisionAllow || err != nil {
		t.Fatalf("a shard admin was held: %v %v", d, err)
	}
	// A user whose access comes from RBAC waits; a request that gives up
	// gets an error, not a denial.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if d, _, err := a.Authorize(ctx, attrs("system:authenticated")); d == authorizer.DecisionAllow || err == nil {
		t.Fatalf("a user was decided before the caches synced: %v %v", d, err)
	}
	done := make(chan authorizer.Decision, 1)
	go func() {
		d, _, _ := a.Authorize(t.Context(), attrs("system:authenticated"))
		done <- d
	}()
	select {
	case d := <-done:
		t.Fatalf("decided %v before the gate opened", d)
	case <-time.After(50 * time.Millisecond):
	}
	g.open()
	g.open()
	if d := <-done; d != authorizer.DecisionAllow {
		t.Fatalf("decision %v after the gate opened", d)
	}
}
