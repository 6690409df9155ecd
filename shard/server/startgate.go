package server

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// startGate holds authorization until the informers the authorizer reads
// (RBAC, LogicalClusters, bindings) have synced once. A shard serves as
// soon as it listens, and the front-proxy routes to it by name, before its
// /readyz passes: without the gate a request in the first second of a
// start or restart is judged against empty caches and refused with 403.
// Shard admins (system:masters, the loopback client among them) pass at
// once: their access does not come from those caches, and the informers
// themselves list through the loopback client.
type startGate struct {
	once  sync.Once
	ready chan struct{}
}

func newStartGate() *startGate { return &startGate{ready: make(chan struct{})} }

// open lets everyone through from now on.
func (g *startGate) open() { g.once.Do(func() { close(g.ready) }) }

// wrap returns a's decisions, once the gate is open.
func (g *startGate) wrap(a authorizer.Authorizer) authorizer.Authorizer {
	return authorizer.AuthorizerFunc(func(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
		if u := attrs.GetUser(); u == nil || !slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) {
			select {
			case <-g.ready:
			case <-ctx.Done():
				return authorizer.DecisionNoOpinion, "", fmt.Errorf("the shard is starting and its authorization caches have not synced: %w", ctx.Err())
			}
		}
		return a.Authorize(ctx, attrs)
	})
}
