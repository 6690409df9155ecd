package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

var configmaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// obj builds the metadata of a configmap in namespace ns.
func obj(name string, uid types.UID, opts ...func(*metav1.PartialObjectMetadata)) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid, ResourceVersion: "7"}}
	for _, o := range opts {
		o(m)
	}
	return m
}

func ownedBy(uid types.UID, block bool) func(*metav1.PartialObjectMetadata) {
	return func(m *metav1.PartialObjectMetadata) {
		ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner-" + string(uid), UID: uid}
		if block {
			ref.BlockOwnerDeletion = ptr.To(true)
		}
		m.OwnerReferences = append(m.OwnerReferences, ref)
	}
}

func deleting(finalizers ...string) func(*metav1.PartialObjectMetadata) {
	return func(m *metav1.PartialObjectMetadata) {
		now := metav1.Now()
		m.DeletionTimestamp = &now
		m.Finalizers = finalizers
	}
}

// action is a write the collector made.
type action struct {
	verb   string // delete or patch
	name   string
	policy metav1.DeletionPropagation
	// patch is the decoded metadata of a patch.
	patch map[string]any
}

// graph is the state the collector's dependencies read: the cache of
// logical cluster "a", and what the API server has (by name, for owner
// lookups and reads of dependents).
type graph struct {
	cached   []*metav1.PartialObjectMetadata
	live     map[string]*metav1.PartialObjectMetadata
	ownerErr error
	// patchErr fails patches of objects by name.
	patchErr map[string]error
	actions  []action
}

func (g *graph) collector(t *testing.T) *collector {
	check := func(cluster logicalcluster.Name) {
		t.Helper()
		if cluster != "a" {
			t.Errorf("collector reached logical cluster %q, want a", cluster)
		}
	}
	return &collector{
		objectByUID: func(cluster logicalcluster.Name, uid types.UID) (object, bool) {
			check(cluster)
			for _, m := range g.cached {
				if m.UID == uid {
					return object{resource: configmaps, meta: m}, true
				}
			}
			return object{}, false
		},
		dependentsOf: func(cluster logicalcluster.Name, uid types.UID) []object {
			check(cluster)
			var out []object
			for _, m := range g.cached {
				if slices.ContainsFunc(m.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == uid }) {
					out = append(out, object{resource: configmaps, meta: m})
				}
			}
			return out
		},
		getOwner: func(_ context.Context, cluster logicalcluster.Name, namespace string, ref metav1.OwnerReference) (*metav1.PartialObjectMetadata, error) {
			check(cluster)
			if g.ownerErr != nil {
				return nil, g.ownerErr
			}
			if m, ok := g.live[ref.Name]; ok && m.Namespace == namespace {
				return m, nil
			}
			return nil, apierrors.NewNotFound(configmaps.GroupResource(), ref.Name)
		},
		get: func(_ context.Context, cluster logicalcluster.Name, o object) (*metav1.PartialObjectMetadata, error) {
			check(cluster)
			if m, ok := g.live[o.meta.Name]; ok {
				return m, nil
			}
			return nil, apierrors.NewNotFound(o.resource.GroupResource(), o.meta.Name)
		},
		delete: func(_ context.Context, cluster logicalcluster.Name, o object, uid types.UID, policy metav1.DeletionPropagation) error {
			check(cluster)
			if uid != o.meta.UID {
				t.Errorf("delete of %s with UID precondition %s, want %s", o.meta.Name, uid, o.meta.UID)
			}
			g.actions = append(g.actions, action{verb: "delete", name: o.meta.Name, policy: policy})
			return nil
		},
		patch: func(_ context.Context, cluster logicalcluster.Name, o object, patch []byte) error {
			check(cluster)
			var p struct {
				Metadata map[string]any `json:"metadata"`
			}
			if err := json.Unmarshal(patch, &p); err != nil {
				t.Fatalf("patch %s is not JSON: %v", patch, err)
			}
			g.actions = append(g.actions, action{verb: "patch", name: o.meta.Name, patch: p.Metadata})
			return g.patchErr[o.meta.Name]
		},
	}
}

// live indexes objects by name.
func live(objs ...*metav1.PartialObjectMetadata) map[string]*metav1.PartialObjectMetadata {
	out := map[string]*metav1.PartialObjectMetadata{}
	for _, o := range objs {
		out[o.Name] = o
	}
	return out
}

func TestReconcile(t *testing.T) {
	// Owners are named owner-<uid> so that owner references find them.
	owner := obj("owner-o1", "o1")
	other := obj("owner-o2", "o2")
	dep := obj("dep", "d1", ownedBy("o1", false))
	depTwoOwners := obj("dep", "d1", ownedBy("o1", false), ownedBy("o2", false))
	blockingDep := obj("dep", "d1", ownedBy("o1", true))

	for _, tc := range []struct {
		name         string
		g            graph
		owner        types.UID
		wantErr      bool
		wantRequeue  time.Duration
		wantActions  []action
		checkPatches func(t *testing.T, actions []action)
	}{
		{
			name:        "owner gone: its only dependent is deleted in the background",
			g:           graph{cached: []*metav1.PartialObjectMetadata{dep}, live: live(dep)},
			owner:       "o1",
			wantActions: []action{{verb: "delete", name: "dep", policy: metav1.DeletePropagationBackground}},
		},
		{
			name:  "owner missing from the cache but alive on the server",
			g:     graph{cached: []*metav1.PartialObjectMetadata{dep}, live: live(dep, owner)},
			owner: "o1",
		},
		{
			name:        "owner name reused by an object with another UID",
			g:           graph{cached: []*metav1.PartialObjectMetadata{dep}, live: live(dep, obj("owner-o1", "new"))},
			owner:       "o1",
			wantActions: []action{{verb: "delete", name: "dep", policy: metav1.DeletePropagationBackground}},
		},
		{
			name:        "dependent with another live owner loses the reference",
			g:           graph{cached: []*metav1.PartialObjectMetadata{depTwoOwners, other}, live: live(depTwoOwners, other)},
			owner:       "o1",
			wantActions: []action{{verb: "patch", name: "dep"}},
			checkPatches: func(t *testing.T, actions []action) {
				refs, _ := actions[0].patch["ownerReferences"].([]any)
				if len(refs) != 1 || refs[0].(map[string]any)["uid"] != "o2" || actions[0].patch["resourceVersion"] != "7" || actions[0].patch["uid"] != "d1" {
					t.Errorf("patch = %v, want only the reference to o2, with uid and resourceVersion", actions[0].patch)
				}
			},
		},
		{
			name:        "every owner gone",
			g:           graph{cached: []*metav1.PartialObjectMetadata{depTwoOwners}, live: live(depTwoOwners)},
			owner:       "o1",
			wantActions: []action{{verb: "delete", name: "dep", policy: metav1.DeletePropagationBackground}},
		},
		{
			name: "dependent already deleted",
			g:    graph{cached: []*metav1.PartialObjectMetadata{dep}},
			// Not on the server any more.
			owner: "o1",
		},
		{
			name:  "dependent already being deleted",
			g:     graph{cached: []*metav1.PartialObjectMetadata{dep}, live: live(obj("dep", "d1", ownedBy("o1", false), deleting("x")))},
			owner: "o1",
		},
		{
			name:  "the server's dependent no longer refers to the owner",
			g:     graph{cached: []*metav1.PartialObjectMetadata{dep, other}, live: live(obj("dep", "d1", ownedBy("o2", false)), other)},
			owner: "o1",
		},
		{
			name:  "dependent replaced by one with another UID",
			g:     graph{cached: []*metav1.PartialObjectMetadata{dep}, live: live(obj("dep", "d2", ownedBy("o1", false)))},
			owner: "o1",
		},
		{
			name:    "owner lookup fails: nothing is deleted",
			g:       graph{cached: []*metav1.PartialObjectMetadata{dep}, live: live(dep), ownerErr: errors.New("connection refused")},
			owner:   "o1",
			wantErr: true,
		},
		{
			name: "dependent with the orphan finalizer keeps its own dependents",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{dep},
				live:   live(obj("dep", "d1", ownedBy("o1", false), func(m *metav1.PartialObjectMetadata) { m.Finalizers = []string{metav1.FinalizerOrphanDependents} })),
			},
			owner:       "o1",
			wantActions: []action{{verb: "delete", name: "dep", policy: metav1.DeletePropagationOrphan}},
		},
		{
			name:  "owner alive",
			g:     graph{cached: []*metav1.PartialObjectMetadata{owner, dep}, live: live(owner, dep)},
			owner: "o1",
		},
		{
			name:  "owner being deleted without GC finalizer",
			g:     graph{cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting("example.com/x")), dep}, live: live(dep)},
			owner: "o1",
		},
		{
			name: "orphan: references removed, then the finalizer",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerOrphanDependents, "example.com/x")), depTwoOwners, other},
				live:   live(depTwoOwners, other),
			},
			owner:       "o1",
			wantActions: []action{{verb: "patch", name: "dep"}, {verb: "patch", name: "owner-o1"}},
			checkPatches: func(t *testing.T, actions []action) {
				refs, _ := actions[0].patch["ownerReferences"].([]any)
				if len(refs) != 1 {
					t.Errorf("dependent patch = %v, want the reference to o2 kept", actions[0].patch)
				}
				fins, _ := actions[1].patch["finalizers"].([]any)
				if len(fins) != 1 || fins[0] != "example.com/x" {
					t.Errorf("owner patch = %v, want only example.com/x left", actions[1].patch)
				}
			},
		},
		{
			name: "orphan of the last reference removes the field",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerOrphanDependents)), dep},
				live:   live(dep),
			},
			owner:       "o1",
			wantActions: []action{{verb: "patch", name: "dep"}, {verb: "patch", name: "owner-o1"}},
			checkPatches: func(t *testing.T, actions []action) {
				if v, ok := actions[0].patch["ownerReferences"]; !ok || v != nil {
					t.Errorf("dependent patch = %v, want ownerReferences: null", actions[0].patch)
				}
				if v, ok := actions[1].patch["finalizers"]; !ok || v != nil {
					t.Errorf("owner patch = %v, want finalizers: null", actions[1].patch)
				}
			},
		},
		{
			name: "orphan: a dependent changed meanwhile, retried without removing the finalizer",
			g: graph{
				cached:   []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerOrphanDependents)), dep},
				live:     live(dep),
				patchErr: map[string]error{"dep": apierrors.NewConflict(configmaps.GroupResource(), "dep", errors.New("changed"))},
			},
			owner:       "o1",
			wantRequeue: staleRetry,
			wantActions: []action{{verb: "patch", name: "dep"}},
		},
		{
			name: "orphan: dependent patch fails",
			g: graph{
				cached:   []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerOrphanDependents)), dep},
				live:     live(dep),
				patchErr: map[string]error{"dep": errors.New("boom")},
			},
			owner:       "o1",
			wantErr:     true,
			wantActions: []action{{verb: "patch", name: "dep"}},
		},
		{
			name: "owner changed since cached: finalizer removal retried",
			g: graph{
				cached:   []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerDeleteDependents))},
				patchErr: map[string]error{"owner-o1": apierrors.NewConflict(configmaps.GroupResource(), "owner-o1", errors.New("changed"))},
			},
			owner:       "o1",
			wantRequeue: staleRetry,
			wantActions: []action{{verb: "patch", name: "owner-o1"}},
		},
		{
			name: "foreground: blocking dependent deleted, owner waits",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerDeleteDependents)), blockingDep},
				live:   live(blockingDep),
			},
			owner:       "o1",
			wantRequeue: foregroundRecheck,
			wantActions: []action{{verb: "delete", name: "dep", policy: metav1.DeletePropagationBackground}},
		},
		{
			name: "foreground: dependent with dependents deleted in the foreground",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{
					obj("owner-o1", "o1", deleting(metav1.FinalizerDeleteDependents)), blockingDep,
					obj("grandchild", "g1", func(m *metav1.PartialObjectMetadata) {
						m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "dep", UID: "d1"}}
					}),
				},
				live: live(blockingDep),
			},
			owner:       "o1",
			wantRequeue: foregroundRecheck,
			wantActions: []action{{verb: "delete", name: "dep", policy: metav1.DeletePropagationForeground}},
		},
		{
			name: "foreground: blocking dependent already going, owner waits",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerDeleteDependents)), obj("dep", "d1", ownedBy("o1", true), deleting("x"))},
			},
			owner:       "o1",
			wantRequeue: foregroundRecheck,
		},
		{
			name: "foreground: non-blocking dependents deleted, finalizer removed",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerDeleteDependents)), dep},
				live:   live(dep),
			},
			owner:       "o1",
			wantActions: []action{{verb: "delete", name: "dep", policy: metav1.DeletePropagationBackground}, {verb: "patch", name: "owner-o1"}},
		},
		{
			name: "foreground: dependent kept by another owner loses the reference",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerDeleteDependents)), obj("dep", "d1", ownedBy("o1", true), ownedBy("o2", false)), other},
				live:   live(obj("dep", "d1", ownedBy("o1", true), ownedBy("o2", false)), other),
			},
			owner:       "o1",
			wantRequeue: foregroundRecheck,
			wantActions: []action{{verb: "patch", name: "dep"}},
		},
		{
			name: "foreground: no dependents",
			g: graph{
				cached: []*metav1.PartialObjectMetadata{obj("owner-o1", "o1", deleting(metav1.FinalizerDeleteDependents))},
			},
			owner:       "o1",
			wantActions: []action{{verb: "patch", name: "owner-o1"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			res, err := g.collector(t).Reconcile(t.Context(), reconciler.Key{Cluster: "a", Name: string(tc.owner)})
			if (err != nil) != tc.wantErr {
				t.Errorf("Reconcile() error = %v, want error %v", err, tc.wantErr)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, tc.wantRequeue)
			}
			if len(g.actions) != len(tc.wantActions) {
				t.Fatalf("actions = %+v, want %+v", g.actions, tc.wantActions)
			}
			for i, want := range tc.wantActions {
				got := g.actions[i]
				if got.verb != want.verb || got.name != want.name || got.policy != want.policy {
					t.Errorf("action %d = %s %s %s, want %s %s %s", i, got.verb, got.name, got.policy, want.verb, want.name, want.policy)
				}
			}
			if tc.checkPatches != nil {
				tc.checkPatches(t, g.actions)
			}
		})
	}
}
