package finalizer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2/ktesting"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

type crdOption func(*apiextensionsv1.CustomResourceDefinition)

// widgets returns the CRD widgets.example.com of cluster a, serving and
// storing v1, Established.
func widgets(opts ...crdOption) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "widgets.example.com",
			ResourceVersion: "5",
			Annotations:     map[string]string{logicalcluster.AnnotationKey: "a"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true},
			},
		},
	}
	apiextensionshelpers.SetCRDCondition(c, apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue})
	for _, o := range opts {
		o(c)
	}
	return c
}

// deleting marks the CRD deleted as the CRD registry does.
func deleting(c *apiextensionsv1.CustomResourceDefinition) {
	now := metav1.Now()
	c.DeletionTimestamp = &now
	c.Finalizers = append(c.Finalizers, "other", apiextensionsv1.CustomResourceCleanupFinalizer)
	apiextensionshelpers.SetCRDCondition(c, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue, Reason: "InstanceDeletionPending",
	})
}

func clusterScoped(c *apiextensionsv1.CustomResourceDefinition) {
	c.Spec.Scope = apiextensionsv1.ClusterScoped
}

func notEstablished(c *apiextensionsv1.CustomResourceDefinition) {
	apiextensionshelpers.RemoveCRDCondition(c, apiextensionsv1.Established)
}

func versions(vs ...apiextensionsv1.CustomResourceDefinitionVersion) crdOption {
	return func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Versions = vs }
}

// instance is a custom resource in the fake API: cluster, version through
// which it can be reached, namespace and name.
type instance struct {
	cluster    logicalcluster.Name
	namespace  string
	name       string
	finalizers bool
}

// fakeAPI holds custom resources and records requests.
type fakeAPI struct {
	crd       *apiextensionsv1.CustomResourceDefinition
	instances []instance
	// notServed are versions whose list answers NotFound.
	notServed map[string]bool
	listErr   error
	deleteErr error
	patchErrs []error

	patched []*apiextensionsv1.CustomResourceDefinition
	calls   []string
}

func (f *fakeAPI) cleaner() *cleaner {
	gr := schema.GroupResource{Group: "example.com", Resource: "widgets"}
	return &cleaner{
		getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
			if f.crd == nil || cluster != "a" || name != f.crd.Name {
				return nil, apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), name)
			}
			return f.crd, nil
		},
		patchStatus: func(_ context.Context, cluster logicalcluster.Name, old, new *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
			if len(f.patchErrs) > 0 {
				err := f.patchErrs[0]
				f.patchErrs = f.patchErrs[1:]
				if err != nil {
					return nil, err
				}
			}
			if cluster != "a" {
				return nil, fmt.Errorf("write to cluster %s", cluster)
			}
			if old.ResourceVersion != fmt.Sprint(5+len(f.patched)) {
				return nil, fmt.Errorf("patch computed from resourceVersion %s, not from the latest write", old.ResourceVersion)
			}
			if apiextensionshelpers.IsCRDConditionEquivalent(
				apiextensionshelpers.FindCRDCondition(old, apiextensionsv1.Terminating),
				apiextensionshelpers.FindCRDCondition(new, apiextensionsv1.Terminating)) && slices.Equal(old.Finalizers, new.Finalizers) {
				return old, nil
			}
			written := new.DeepCopy()
			written.ResourceVersion = fmt.Sprint(6 + len(f.patched))
			f.patched = append(f.patched, written)
			return written, nil
		},
		listInstances: func(_ context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource) (instances, error) {
			f.calls = append(f.calls, fmt.Sprintf("list %s %s", cluster, gvr.Version))
			if gvr.GroupResource() != gr {
				return instances{}, fmt.Errorf("unexpected resource %s", gvr)
			}
			if f.notServed[gvr.Version] {
				return instances{}, apierrors.NewNotFound(gvr.GroupResource(), "")
			}
			if f.listErr != nil {
				return instances{}, f.listErr
			}
			var got instances
			for _, i := range f.instances {
				if i.cluster != cluster {
					continue
				}
				got.count++
				if i.namespace != "" && !slices.Contains(got.namespaces, i.namespace) {
					got.namespaces = append(got.namespaces, i.namespace)
				}
			}
			return got, nil
		},
		deleteInstances: func(_ context.Context, cluster logicalcluster.Name, gvr schema.GroupVersionResource, namespace string) error {
			f.calls = append(f.calls, fmt.Sprintf("delete %s %s %q", cluster, gvr.Version, namespace))
			if f.deleteErr != nil {
				return f.deleteErr
			}
			f.instances = slices.DeleteFunc(f.instances, func(i instance) bool {
				return i.cluster == cluster && i.namespace == namespace && !i.finalizers
			})
			return nil
		},
		pollInterval: 5 * time.Second,
	}
}

func TestReconcile(t *testing.T) {
	errBoom := errors.New("boom")
	conflict := apierrors.NewConflict(apiextensionsv1.Resource("customresourcedefinitions"), "widgets.example.com", errBoom)
	// The fake API deletes in place: every case gets its own instances.
	inA := func() []instance {
		return []instance{{cluster: "a", namespace: "ns1", name: "x"}, {cluster: "a", namespace: "ns2", name: "y"}, {cluster: "a", namespace: "ns1", name: "z"}}
	}
	inB := func() []instance { return []instance{{cluster: "b", namespace: "ns1", name: "x"}} }
	for _, tc := range []struct {
		name      string
		api       *fakeAPI
		wantErr   error
		terminal  bool
		wantAfter time.Duration
		// wantConditions are the Terminating reasons written, in order.
		wantConditions []string
		wantCalls      []string
		// wantFinalized tells whether the last write removed the finalizer
		// and kept the others.
		wantFinalized bool
		// wantLeft are the instances left, by cluster/namespace/name.
		wantLeft []string
	}{
		{name: "CRD not deleted", api: &fakeAPI{crd: widgets(), instances: inA()}, wantLeft: []string{"a/ns1/x", "a/ns2/y", "a/ns1/z"}},
		{name: "CRD gone", api: &fakeAPI{}},
		{
			name: "finalizer already removed",
			api: &fakeAPI{crd: widgets(deleting, func(c *apiextensionsv1.CustomResourceDefinition) {
				apiextensionshelpers.CRDRemoveFinalizer(c, apiextensionsv1.CustomResourceCleanupFinalizer)
			})},
		},
		{
			name:           "namespaced instances are deleted per namespace in their cluster only",
			api:            &fakeAPI{crd: widgets(deleting), instances: append(inA(), inB()...)},
			wantConditions: []string{"True/InstanceDeletionInProgress", "False/InstanceDeletionCompleted"},
			wantCalls:      []string{"list a v1", `delete a v1 "ns1"`, `delete a v1 "ns2"`, "list a v1"},
			wantFinalized:  true,
			wantLeft:       []string{"b/ns1/x"},
		},
		{
			name:           "cluster-scoped instances are deleted at once",
			api:            &fakeAPI{crd: widgets(deleting, clusterScoped), instances: []instance{{cluster: "a", name: "x"}, {cluster: "a", name: "y"}, {cluster: "b", name: "x"}}},
			wantConditions: []string{"True/InstanceDeletionInProgress", "False/InstanceDeletionCompleted"},
			wantCalls:      []string{"list a v1", `delete a v1 ""`, "list a v1"},
			wantFinalized:  true,
			wantLeft:       []string{"b//x"},
		},
		{
			name:           "no instances",
			api:            &fakeAPI{crd: widgets(deleting), instances: inB()},
			wantConditions: []string{"True/InstanceDeletionInProgress", "False/InstanceDeletionCompleted"},
			wantCalls:      []string{"list a v1"},
			wantFinalized:  true,
			wantLeft:       []string{"b/ns1/x"},
		},
		{
			name:           "instances that outlive their deletion are waited for",
			api:            &fakeAPI{crd: widgets(deleting), instances: []instance{{cluster: "a", namespace: "ns1", name: "x", finalizers: true}, {cluster: "a", namespace: "ns1", name: "y"}}},
			wantAfter:      5 * time.Second,
			wantConditions: []string{"True/InstanceDeletionInProgress"},
			wantCalls:      []string{"list a v1", `delete a v1 "ns1"`, "list a v1"},
			wantLeft:       []string{"a/ns1/x"},
		},
		{
			name:           "failed deletes are reported and retried",
			api:            &fakeAPI{crd: widgets(deleting), instances: inA(), deleteErr: errBoom},
			wantErr:        errBoom,
			wantConditions: []string{"True/InstanceDeletionInProgress", "True/InstanceDeletionFailed"},
			wantCalls:      []string{"list a v1", `delete a v1 "ns1"`, `delete a v1 "ns2"`},
			wantLeft:       []string{"a/ns1/x", "a/ns2/y", "a/ns1/z"},
		},
		{
			name:           "failed lists are reported and retried",
			api:            &fakeAPI{crd: widgets(deleting), instances: inA(), listErr: errBoom},
			wantErr:        errBoom,
			wantConditions: []string{"True/InstanceDeletionInProgress", "True/InstanceDeletionFailed"},
			wantCalls:      []string{"list a v1"},
			wantLeft:       []string{"a/ns1/x", "a/ns2/y", "a/ns1/z"},
		},
		{
			name: "the storage version is used first, then other served versions",
			api: &fakeAPI{
				crd: widgets(deleting, versions(
					apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Served: true},
					apiextensionsv1.CustomResourceDefinitionVersion{Name: "v2", Served: true, Storage: true},
					apiextensionsv1.CustomResourceDefinitionVersion{Name: "v3"},
				)),
				instances: inA(),
				notServed: map[string]bool{"v2": true},
			},
			wantConditions: []string{"True/InstanceDeletionInProgress", "False/InstanceDeletionCompleted"},
			wantCalls:      []string{"list a v2", "list a v1", `delete a v1 "ns1"`, `delete a v1 "ns2"`, "list a v1"},
			wantFinalized:  true,
		},
		{
			name: "no served version",
			api: &fakeAPI{
				crd:       widgets(deleting, versions(apiextensionsv1.CustomResourceDefinitionVersion{Name: "v1", Storage: true})),
				instances: inA(),
			},
			terminal:       true,
			wantConditions: []string{"True/InstanceDeletionInProgress", "True/InstanceDeletionFailed"},
			wantLeft:       []string{"a/ns1/x", "a/ns2/y", "a/ns1/z"},
		},
		{
			name:           "never established",
			api:            &fakeAPI{crd: widgets(deleting, notEstablished), instances: inA()},
			wantConditions: []string{"True/InstanceDeletionInProgress", "False/NeverEstablished"},
			wantFinalized:  true,
			wantLeft:       []string{"a/ns1/x", "a/ns2/y", "a/ns1/z"},
		},
		{
			name: "overlapping built-in resource",
			api: &fakeAPI{crd: widgets(deleting, func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Spec.Group, c.Spec.Names.Plural = "apiextensions.k8s.io", "customresourcedefinitions"
			})},
			wantConditions: []string{"True/InstanceDeletionInProgress", "False/OverlappingBuiltInResource"},
			wantFinalized:  true,
		},
		{
			name:      "a conflict waits for the cache",
			api:       &fakeAPI{crd: widgets(deleting), instances: inA(), patchErrs: []error{conflict}},
			wantAfter: time.Second,
			wantLeft:  []string{"a/ns1/x", "a/ns2/y", "a/ns1/z"},
		},
		{
			name:           "a failed finalizer removal is retried",
			api:            &fakeAPI{crd: widgets(deleting), patchErrs: []error{nil, errBoom}},
			wantErr:        errBoom,
			wantConditions: []string{"True/InstanceDeletionInProgress"},
			wantCalls:      []string{"list a v1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var cachedBefore *apiextensionsv1.CustomResourceDefinition
			if tc.api.crd != nil {
				cachedBefore = tc.api.crd.DeepCopy()
			}
			result, err := tc.api.cleaner().reconcile(ctx, reconciler.Key{Cluster: "a", Name: "widgets.example.com"})
			switch {
			case tc.terminal:
				if !reconciler.IsTerminal(err) {
					t.Errorf("reconcile: err = %v, want a terminal error", err)
				}
			case !errors.Is(err, tc.wantErr):
				t.Errorf("reconcile: err = %v, want %v", err, tc.wantErr)
			}
			if result.RequeueAfter != tc.wantAfter {
				t.Errorf("requeue after %v, want %v", result.RequeueAfter, tc.wantAfter)
			}
			if !slices.Equal(tc.api.calls, tc.wantCalls) {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(tc.api.calls, "\n"), strings.Join(tc.wantCalls, "\n"))
			}
			var conds []string
			for _, p := range tc.api.patched {
				c := apiextensionshelpers.FindCRDCondition(p, apiextensionsv1.Terminating)
				conds = append(conds, fmt.Sprintf("%s/%s", c.Status, c.Reason))
			}
			if !slices.Equal(conds, tc.wantConditions) {
				t.Errorf("Terminating conditions written: %v, want %v", conds, tc.wantConditions)
			}
			finalized := len(tc.api.patched) > 0 && slices.Equal(tc.api.patched[len(tc.api.patched)-1].Finalizers, []string{"other"})
			if finalized != tc.wantFinalized {
				t.Errorf("finalized = %v, want %v", finalized, tc.wantFinalized)
			}
			var left []string
			for _, i := range tc.api.instances {
				left = append(left, fmt.Sprintf("%s/%s/%s", i.cluster, i.namespace, i.name))
			}
			if tc.wantLeft != nil && !slices.Equal(left, tc.wantLeft) {
				t.Errorf("instances left: %v, want %v", left, tc.wantLeft)
			}
			if cachedBefore != nil && (!slices.Equal(cachedBefore.Finalizers, tc.api.crd.Finalizers) ||
				len(cachedBefore.Status.Conditions) != len(tc.api.crd.Status.Conditions) ||
				cachedBefore.Status.Conditions[len(cachedBefore.Status.Conditions)-1] != tc.api.crd.Status.Conditions[len(tc.api.crd.Status.Conditions)-1]) {
				t.Errorf("the cached object was changed")
			}
		})
	}
}

func TestOnlyTerminatingChanged(t *testing.T) {
	old := widgets(deleting)
	changed := old.DeepCopy()
	changed.ResourceVersion = "6"
	apiextensionshelpers.SetCRDCondition(changed, apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Terminating, Status: apiextensionsv1.ConditionTrue, Reason: "InstanceDeletionInProgress",
	})
	if !onlyTerminatingChanged(old, changed) {
		t.Errorf("a change of the Terminating condition is more than that")
	}
	changed.Spec.Versions[0].Served = false
	if onlyTerminatingChanged(old, changed) {
		t.Errorf("a change of the spec is only a change of the Terminating condition")
	}
}
