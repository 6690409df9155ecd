package naming

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// crd returns a CRD of cluster whose spec requests plural/kind with the
// given options applied.
func crd(cluster logicalcluster.Name, group, plural, kind string, opts ...func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:            plural + "." + group,
			UID:             types.UID("uid-" + plural),
			ResourceVersion: "10",
			Annotations:     map[string]string{logicalcluster.AnnotationKey: cluster.String()},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: plural, Singular: plural[:len(plural)-1], Kind: kind, ListKind: kind + "List",
			},
		},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// accepted makes the CRD's requested names accepted and Established.
func accepted(c *apiextensionsv1.CustomResourceDefinition) {
	c.Status.AcceptedNames = *c.Spec.Names.DeepCopy()
	apiextensionshelpers.SetCRDCondition(c, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found"})
	apiextensionshelpers.SetCRDCondition(c, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted"})
}

func shortNames(names ...string) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.ShortNames = names }
}

func singular(s string) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Names.Singular = s }
}

// fakes holds the CRDs of a fake informer cache per logical cluster and
// records writes and enqueued keys.
type fakes struct {
	cache    map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition
	patchErr error
	rv       int
	patched  []*apiextensionsv1.CustomResourceDefinition
	enqueued []reconciler.Key
}

func (f *fakes) namer() *namer {
	return &namer{
		getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
			for _, c := range f.cache[cluster] {
				if c.Name == name {
					return c, nil
				}
			}
			return nil, apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), name)
		},
		listCRDs: func(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
			return f.cache[cluster], nil
		},
		patchStatus: func(_ context.Context, cluster logicalcluster.Name, old, new *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
			if f.patchErr != nil {
				return nil, f.patchErr
			}
			if logicalcluster.From(old) != cluster {
				return nil, fmt.Errorf("patch of %s sent to cluster %s", logicalcluster.From(old), cluster)
			}
			written := new.DeepCopy()
			f.rv++
			written.ResourceVersion = strconv.Itoa(100 + f.rv)
			f.patched = append(f.patched, written)
			return written, nil
		},
		enqueue: func(k reconciler.Key) { f.enqueued = append(f.enqueued, k) },
		recent:  newRecentWrites(time.Now),
		builtin: builtinLeases,
	}
}

// builtinLeases are the names of a shard whose only built-in group with a
// dot is coordination.k8s.io, serving leases.
func builtinLeases(group string) (resources, kinds []string) {
	if group != "coordination.k8s.io" {
		return nil, nil
	}
	return []string{"lease", "leases"}, []string{"Lease", "LeaseList"}
}

func condition(c *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) string {
	cond := apiextensionshelpers.FindCRDCondition(c, t)
	if cond == nil {
		return "none"
	}
	return fmt.Sprintf("%s/%s: %s", cond.Status, cond.Reason, cond.Message)
}

func TestReconcile(t *testing.T) {
	const a, b logicalcluster.Name = "a", "b"
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		cache    map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition
		key      reconciler.Key
		patchErr error

		wantErr       error
		wantNames     *apiextensionsv1.CustomResourceDefinitionNames
		wantAccepted  string
		wantEstablish string
		wantEnqueued  []reconciler.Key
	}{
		{
			name:          "new CRD gets its names",
			cache:         map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{a: {crd(a, "example.com", "widgets", "Widget", shortNames("w"))}},
			key:           reconciler.Key{Cluster: a, Name: "widgets.example.com"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", ShortNames: []string{"w"}, Kind: "Widget", ListKind: "WidgetList"},
			wantAccepted:  "True/NoConflicts: no conflicts found",
			wantEstablish: "False/Installing: the initial names have been accepted",
		},
		{
			name: "CRDs of other clusters never conflict",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "widgets", "Widget")},
				b: {crd(b, "example.com", "widgets", "Widget", accepted), crd(b, "example.com", "gadgets", "Widget", singular("widgets"), accepted)},
			},
			key:           reconciler.Key{Cluster: a, Name: "widgets.example.com"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			wantAccepted:  "True/NoConflicts: no conflicts found",
			wantEstablish: "False/Installing: the initial names have been accepted",
		},
		{
			name: "CRDs of other groups never conflict",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "other.io", "widgets", "Widget", accepted), crd(a, "example.com", "widgets", "Widget")},
			},
			key:          reconciler.Key{Cluster: a, Name: "widgets.example.com"},
			wantAccepted: "True/NoConflicts: no conflicts found",
		},
		{
			name: "kind conflict in the same group and cluster",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "widgets", "Widget", accepted), crd(a, "example.com", "gizmos", "Widget")},
			},
			key:           reconciler.Key{Cluster: a, Name: "gizmos.example.com"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo"},
			wantAccepted:  `False/ListKindConflict: "WidgetList" is already in use`,
			wantEstablish: "False/NotAccepted: not all names are accepted",
			wantEnqueued:  []reconciler.Key{{Cluster: a, Name: "widgets.example.com"}},
		},
		{
			name: "singular conflicting with another CRD's plural",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "widgets", "Widget", accepted), crd(a, "example.com", "gizmos", "Gizmo", singular("widgets"))},
			},
			key:           reconciler.Key{Cluster: a, Name: "gizmos.example.com"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Kind: "Gizmo", ListKind: "GizmoList"},
			wantAccepted:  `False/SingularConflict: "widgets" is already in use`,
			wantEstablish: "False/NotAccepted: not all names are accepted",
			wantEnqueued:  []reconciler.Key{{Cluster: a, Name: "widgets.example.com"}},
		},
		{
			name: "short name conflict keeps the other names",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "widgets", "Widget", shortNames("w"), accepted), crd(a, "example.com", "wombats", "Wombat", shortNames("w", "wo"))},
			},
			key:          reconciler.Key{Cluster: a, Name: "wombats.example.com"},
			wantNames:    &apiextensionsv1.CustomResourceDefinitionNames{Plural: "wombats", Singular: "wombat", Kind: "Wombat", ListKind: "WombatList"},
			wantAccepted: `False/ShortNamesConflict: "w" is already in use`,
			wantEnqueued: []reconciler.Key{{Cluster: a, Name: "widgets.example.com"}},
		},
		{
			name: "an Established CRD stays Established when a new name conflicts",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "widgets", "Widget", shortNames("w"), accepted), crd(a, "example.com", "gizmos", "Gizmo", accepted, shortNames("w"))},
			},
			key:           reconciler.Key{Cluster: a, Name: "gizmos.example.com"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "gizmos", Singular: "gizmo", Kind: "Gizmo", ListKind: "GizmoList"},
			wantAccepted:  `False/ShortNamesConflict: "w" is already in use`,
			wantEstablish: "True/InitialNamesAccepted: ",
			wantEnqueued:  []reconciler.Key{{Cluster: a, Name: "widgets.example.com"}},
		},
		{
			name: "a changed short name is accepted and the group requeued",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "widgets", "Widget", accepted, shortNames("wi")), crd(a, "example.com", "gizmos", "Gizmo", accepted), crd(a, "other.io", "things", "Thing")},
				b: {crd(b, "example.com", "gizmos", "Gizmo")},
			},
			key:           reconciler.Key{Cluster: a, Name: "widgets.example.com"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", ShortNames: []string{"wi"}, Kind: "Widget", ListKind: "WidgetList"},
			wantAccepted:  "True/NoConflicts: no conflicts found",
			wantEstablish: "True/InitialNamesAccepted: ",
			wantEnqueued:  []reconciler.Key{{Cluster: a, Name: "gizmos.example.com"}},
		},
		{
			name:          "a CRD of a built-in group gets the names no built-in API uses",
			cache:         map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{a: {crd(a, "coordination.k8s.io", "ballots", "Ballot")}},
			key:           reconciler.Key{Cluster: a, Name: "ballots.coordination.k8s.io"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "ballots", Singular: "ballot", Kind: "Ballot", ListKind: "BallotList"},
			wantAccepted:  "True/NoConflicts: no conflicts found",
			wantEstablish: "False/Installing: the initial names have been accepted",
		},
		{
			name:          "the plural of a built-in resource is never accepted",
			cache:         map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{a: {crd(a, "coordination.k8s.io", "leases", "Tenancy")}},
			key:           reconciler.Key{Cluster: a, Name: "leases.coordination.k8s.io"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Kind: "Tenancy", ListKind: "TenancyList"},
			wantAccepted:  `False/SingularConflict: "lease" is already in use by a built-in API of the group`,
			wantEstablish: "False/NotAccepted: not all names are accepted",
		},
		{
			name:          "a built-in kind or short name is never accepted, even once accepted",
			cache:         map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{a: {crd(a, "coordination.k8s.io", "ballots", "Lease", accepted, shortNames("leases"))}},
			key:           reconciler.Key{Cluster: a, Name: "ballots.coordination.k8s.io"},
			wantAccepted:  `False/ListKindConflict: "LeaseList" is already in use by a built-in API of the group`,
			wantEstablish: "True/InitialNamesAccepted: ",
		},
		{
			name:          "built-in names of other groups never conflict",
			cache:         map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{a: {crd(a, "example.com", "leases", "Lease")}},
			key:           reconciler.Key{Cluster: a, Name: "leases.example.com"},
			wantNames:     &apiextensionsv1.CustomResourceDefinitionNames{Plural: "leases", Singular: "lease", Kind: "Lease", ListKind: "LeaseList"},
			wantAccepted:  "True/NoConflicts: no conflicts found",
			wantEstablish: "False/Installing: the initial names have been accepted",
		},
		{
			name: "accepted names are left alone",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "widgets", "Widget", accepted)},
			},
			key: reconciler.Key{Cluster: a, Name: "widgets.example.com"},
		},
		{
			name: "a deleted CRD frees its names for its group in its cluster",
			cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
				a: {crd(a, "example.com", "gizmos", "Widget"), crd(a, "other.io", "widgets", "Widget")},
				b: {crd(b, "example.com", "gadgets", "Widget")},
			},
			key:          reconciler.Key{Cluster: a, Name: "widgets.example.com"},
			wantEnqueued: []reconciler.Key{{Cluster: a, Name: "gizmos.example.com"}},
		},
		{
			name:     "a conflict on write waits for the next event",
			cache:    map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{a: {crd(a, "example.com", "widgets", "Widget")}},
			key:      reconciler.Key{Cluster: a, Name: "widgets.example.com"},
			patchErr: apierrors.NewConflict(apiextensionsv1.Resource("customresourcedefinitions"), "widgets.example.com", errBoom),
		},
		{
			name:     "other write errors are retried",
			cache:    map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{a: {crd(a, "example.com", "widgets", "Widget")}},
			key:      reconciler.Key{Cluster: a, Name: "widgets.example.com"},
			patchErr: errBoom,
			wantErr:  errBoom,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := &fakes{cache: tc.cache, patchErr: tc.patchErr}
			_, err := f.namer().reconcile(ctx, tc.key)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("reconcile: err = %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(f.enqueued, tc.wantEnqueued) {
				t.Errorf("enqueued %v, want %v", f.enqueued, tc.wantEnqueued)
			}
			if tc.wantAccepted == "" {
				if len(f.patched) != 0 {
					t.Errorf("wrote %v, want no write", f.patched[0].Status)
				}
				return
			}
			if len(f.patched) != 1 {
				t.Fatalf("%d writes, want 1", len(f.patched))
			}
			got := f.patched[0]
			if tc.wantNames != nil {
				if diff := cmp.Diff(*tc.wantNames, got.Status.AcceptedNames); diff != "" {
					t.Errorf("accepted names (-want +got):\n%s", diff)
				}
			}
			if c := condition(got, apiextensionsv1.NamesAccepted); c != tc.wantAccepted {
				t.Errorf("NamesAccepted = %s, want %s", c, tc.wantAccepted)
			}
			if tc.wantEstablish != "" {
				if c := condition(got, apiextensionsv1.Established); c != tc.wantEstablish {
					t.Errorf("Established = %s, want %s", c, tc.wantEstablish)
				}
			}
		})
	}
}

// TestReconcileSeesItsOwnWrites checks that names accepted a moment ago are
// taken even when the informer cache does not show them yet.
func TestReconcileSeesItsOwnWrites(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	const a logicalcluster.Name = "a"
	f := &fakes{cache: map[logicalcluster.Name][]*apiextensionsv1.CustomResourceDefinition{
		a: {crd(a, "example.com", "widgets", "Widget"), crd(a, "example.com", "gizmos", "Widget")},
	}}
	n := f.namer()
	for _, name := range []string{"widgets.example.com", "gizmos.example.com"} {
		if _, err := n.reconcile(ctx, reconciler.Key{Cluster: a, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.patched) != 2 {
		t.Fatalf("%d writes, want 2", len(f.patched))
	}
	if c := condition(f.patched[0], apiextensionsv1.NamesAccepted); c != "True/NoConflicts: no conflicts found" {
		t.Errorf("first CRD: NamesAccepted = %s", c)
	}
	if c := condition(f.patched[1], apiextensionsv1.NamesAccepted); c != `False/ListKindConflict: "WidgetList" is already in use` {
		t.Errorf("second CRD: NamesAccepted = %s, want a kind conflict", c)
	}

	// Once the cache has a newer version, the remembered write is dropped.
	newer := f.patched[0].DeepCopy()
	newer.ResourceVersion = "1000"
	if got := n.recent.newer(a, newer); got != newer {
		t.Errorf("remembered write shadows a newer cached object")
	}
	if got := n.recent.newer(a, f.cache[a][0]); got != f.cache[a][0] {
		t.Errorf("remembered write was kept after the cache caught up")
	}
}
