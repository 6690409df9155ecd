package apibinding

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// Finalizer holds a deleting binding until the objects of its resources
// are gone.
const Finalizer = apisv1alpha1.APIBindingFinalizer

// retryUnresolved is how soon a binding whose export, workspace or schema
// is missing is looked at again (besides the events that enqueue it).
const retryUnresolved = 5 * time.Second

// Config is what the controller needs.
type Config struct {
	Factory *informers.SharedInformerFactory
	// Exports and Schemas, when set, replace the factory's: e.g. unions
	// with the replicas of other shards (informers.NewUnion).
	Exports *informers.Informer[*apisv1alpha1.APIExport]
	Schemas *informers.Informer[*apisv1alpha1.APIResourceSchema]
	KCP     *clusters.KCPClusterClientset
	Dynamic *clusters.DynamicClusterClient
	// ResolvePath maps a workspace path (or logical cluster name) to the
	// logical cluster it addresses.
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	// PathOf returns the canonical path of a logical cluster, "" if unknown.
	PathOf func(logicalcluster.Name) string
	// Builtin tells whether a built-in API of the shard serves
	// group/resource other than under identity (kcp's own APIs are served
	// by built-in registries under the identities of root's exports, and
	// binding those exports is no conflict).
	Builtin func(group, resource, identity string) bool
	// DeleteStored removes the stored objects of a bound resource in a
	// logical cluster without the API, for resources no longer served
	// (their schema is gone).
	DeleteStored func(ctx context.Context, cluster logicalcluster.Name, gr schema.GroupResource, identity string) error
}

// Controller is the APIBinding controller.
type Controller struct {
	*reconciler.Controller
	cfg      Config
	bindings informers.Informer[*apisv1alpha1.APIBinding]
	exports  informers.Informer[*apisv1alpha1.APIExport]
	schemas  informers.Informer[*apisv1alpha1.APIResourceSchema]
	crds     informers.Informer[*apiextensionsv1.CustomResourceDefinition]
	locks    [64]sync.Mutex
}

// New wires the controller. The APIBinding informer must have the
// ByBoundResource and ByExport indexes.
func New(cfg Config) (*Controller, error) {
	f := cfg.Factory
	c := &Controller{
		cfg:      cfg,
		bindings: f.APIBindings(),
		exports:  f.APIExports(),
		schemas:  f.APIResourceSchemas(),
		crds:     f.CustomResourceDefinitions(),
	}
	if cfg.Exports != nil {
		c.exports = *cfg.Exports
	}
	if cfg.Schemas != nil {
		c.schemas = *cfg.Schemas
	}
	c.Controller = reconciler.New("apibinding", reconciler.Func(c.reconcile), reconciler.Options{Workers: 16})
	if err := c.Watch(c.bindings.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	// A binding that lets go of resources, or a CRD that goes, may end the
	// conflict of another binding of the cluster.
	if err := c.Watch(c.bindings.Informer(), cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, obj any) {
			old, ok1 := oldObj.(*apisv1alpha1.APIBinding)
			b, ok2 := obj.(*apisv1alpha1.APIBinding)
			if ok1 && ok2 && len(b.Status.BoundResources) < len(old.Status.BoundResources) {
				c.enqueueWaiting(logicalcluster.From(b))
			}
		},
		DeleteFunc: func(obj any) { c.enqueueWaitingOf(obj) },
	}); err != nil {
		return nil, err
	}
	if err := c.Watch(c.crds.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueWaitingOf}); err != nil {
		return nil, err
	}
	if err := c.Watch(c.exports.Informer(), reconciler.EnqueueMappedHandler(c.Controller, c.bindingsOfExport)); err != nil {
		return nil, err
	}
	if err := c.Watch(c.schemas.Informer(), reconciler.EnqueueMappedHandler(c.Controller, c.bindingsOfSchema)); err != nil {
		return nil, err
	}
	return c, nil
}

// bindingsOfExport maps an export to the bindings that use or wait for it.
func (c *Controller) bindingsOfExport(obj any) []reconciler.Key {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	e, ok := obj.(*apisv1alpha1.APIExport)
	if !ok {
		return nil
	}
	cluster := logicalcluster.From(e)
	indexKeys := []string{ExportKey(cluster, e.Name), RefKey(cluster.String(), e.Name)}
	p := c.cfg.PathOf(cluster)
	if p == "" {
		// A replica from another shard carries its path.
		p = e.Annotations[logicalcluster.PathAnnotationKey]
	}
	if p != "" {
		indexKeys = append(indexKeys, RefKey(p, e.Name))
	}
	return c.keysByIndex(ByExport, indexKeys...)
}

// bindingsOfSchema maps a schema to the bindings of the exports of its
// cluster that name it.
func (c *Controller) bindingsOfSchema(obj any) []reconciler.Key {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	s, ok := obj.(*apisv1alpha1.APIResourceSchema)
	if !ok {
		return nil
	}
	cluster := logicalcluster.From(s)
	exports, err := c.exports.Lister().Cluster(cluster).List(everything())
	if err != nil {
		return nil
	}
	var keys []reconciler.Key
	for _, e := range exports {
		for _, name := range e.Spec.LatestResourceSchemas {
			if name == s.Name {
				keys = append(keys, c.bindingsOfExport(e)...)
				break
			}
		}
	}
	return keys
}

// enqueueWaitingOf enqueues the bindings of the cluster of obj that are
// waiting for a conflict to end.
func (c *Controller) enqueueWaitingOf(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if m, ok := obj.(metav1.Object); ok {
		c.enqueueWaiting(logicalcluster.From(m))
	}
}

// enqueueWaiting enqueues the bindings of a cluster that report a naming
// conflict.
func (c *Controller) enqueueWaiting(cluster logicalcluster.Name) {
	bindings, err := c.bindings.Lister().Cluster(cluster).List(everything())
	if err != nil {
		return
	}
	for _, b := range bindings {
		if conditionsv1alpha1.GetReason(b, apisv1alpha1.BindingUpToDate) == apisv1alpha1.NamingConflictsReason {
			c.Enqueue(reconciler.Key{Cluster: cluster, Name: b.Name})
		}
	}
}

func (c *Controller) keysByIndex(index string, values ...string) []reconciler.Key {
	seen := map[reconciler.Key]bool{}
	var keys []reconciler.Key
	for _, v := range values {
		objs, err := c.bindings.Informer().GetIndexer().ByIndex(index, v)
		if err != nil {
			continue
		}
		for _, o := range objs {
			b, ok := o.(*apisv1alpha1.APIBinding)
			if !ok {
				continue
			}
			k := reconciler.Key{Cluster: logicalcluster.From(b), Name: b.Name}
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func (c *Controller) lock(cluster logicalcluster.Name) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(cluster))
	m := &c.locks[h.Sum32()%uint32(len(c.locks))]
	m.Lock()
	return m.Unlock
}

func (c *Controller) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	b, err := c.bindings.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	client, err := c.cfg.KCP.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	if b.DeletionTimestamp != nil {
		return c.finalize(ctx, client, b)
	}
	if !sets.New(b.Finalizers...).Has(Finalizer) {
		b = b.DeepCopy()
		b.Finalizers = append(b.Finalizers, Finalizer)
		_, err := client.APIBindings().Update(ctx, b, metav1.UpdateOptions{})
		return reconciler.Result{}, err
	}

	// The export's extra annotations, once bound (an export that went
	// away leaves them: the binding still serves what it bound).
	if export := c.boundExport(b); export != nil {
		if annotations, changed := withExtraAnnotations(b, export); changed {
			b = b.DeepCopy()
			b.Annotations = annotations
			_, err := client.APIBindings().Update(ctx, b, metav1.UpdateOptions{})
			return reconciler.Result{}, err
		}
	}

	unlock := c.lock(key.Cluster)
	defer unlock()
	updated := b.DeepCopy()
	result := c.bind(key.Cluster, updated)
	summarize(updated)
	if equality.Semantic.DeepEqual(b.Status, updated.Status) && statusClaimAnnotationsEqual(b, updated) {
		return result, nil
	}
	written, err := client.APIBindings().UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		return reconciler.Result{}, err
	}
	// The next binding of the cluster must see what this one claimed.
	_ = wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, time.Second, true, func(context.Context) (bool, error) {
		cur, err := c.bindings.Lister().Cluster(key.Cluster).Get(key.Name)
		return err == nil && cur.ResourceVersion == written.ResourceVersion, nil
	})
	return result, nil
}

// bind computes the status of b (a copy it may modify).
func (c *Controller) bind(cluster logicalcluster.Name, b *apisv1alpha1.APIBinding) reconciler.Result {
	if b.Status.Phase == "" {
		b.Status.Phase = apisv1alpha1.APIBindingPhaseBinding
	}
	notYet := func() {
		if !conditionsv1alpha1.IsTrue(b, apisv1alpha1.InitialBindingCompleted) {
			conditionsv1alpha1.MarkFalse(b, apisv1alpha1.InitialBindingCompleted, apisv1alpha1.WaitingForEstablishedReason,
				conditionsv1alpha1.ConditionSeverityInfo, "waiting for the APIExport and its schemas")
		}
	}
	invalid := func(reason, format string, args ...any) reconciler.Result {
		conditionsv1alpha1.MarkFalse(b, apisv1alpha1.APIExportValid, reason, conditionsv1alpha1.ConditionSeverityError, format, args...)
		notYet()
		return reconciler.Result{RequeueAfter: retryUnresolved}
	}
	ref := b.Spec.Reference.Export
	if ref == nil || ref.Name == "" {
		return invalid(apisv1alpha1.APIExportInvalidReferenceReason, "spec.reference.export.name is required")
	}
	exportCluster := cluster
	path := ref.Path
	if path != "" {
		name, ok := c.cfg.ResolvePath(logicalcluster.NewPath(path))
		if !ok {
			return invalid(apisv1alpha1.LogicalClusterNotFoundReason, "workspace %s not found", path)
		}
		exportCluster = name
	} else {
		path = cluster.String()
	}
	if prev := b.Status.APIExportClusterName; prev != "" && prev != exportCluster.String() {
		return invalid(apisv1alpha1.APIExportInvalidReferenceReason,
			"workspace %s now addresses logical cluster %s, not %s the binding was made with", path, exportCluster, prev)
	}
	export, err := c.exports.Lister().Cluster(exportCluster).Get(ref.Name)
	if err != nil {
		return invalid(apisv1alpha1.APIExportNotFoundReason, "APIExport %s not found in workspace %s", ref.Name, path)
	}
	if export.Status.IdentityHash == "" {
		return invalid(apisv1alpha1.APIExportNotFoundReason, "APIExport %s in workspace %s has no identity yet", ref.Name, path)
	}
	conditionsv1alpha1.MarkTrue(b, apisv1alpha1.APIExportValid)
	setClaimsCondition(b, export)
	b.Status.APIExportClusterName = exportCluster.String()

	previous := map[schema.GroupResource]apisv1alpha1.BoundAPIResource{}
	for _, r := range b.Status.BoundResources {
		previous[schema.GroupResource{Group: r.Group, Resource: r.Resource}] = r
	}
	var (
		resources []apisv1alpha1.BoundAPIResource
		conflicts []string
		missing   []string
	)
	for _, name := range export.Spec.LatestResourceSchemas {
		s, err := c.schemas.Lister().Cluster(exportCluster).Get(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		gr := schema.GroupResource{Group: s.Spec.Group, Resource: s.Spec.Names.Plural}
		if conflict := c.conflict(cluster, b.Name, gr, export.Status.IdentityHash); conflict != "" {
			conflicts = append(conflicts, conflict)
			continue
		}
		r := apisv1alpha1.BoundAPIResource{
			Group:    gr.Group,
			Resource: gr.Resource,
			Schema: apisv1alpha1.BoundAPIResourceSchema{
				Name:         s.Name,
				UID:          string(s.UID),
				IdentityHash: export.Status.IdentityHash,
			},
		}
		versions := sets.New(previous[gr].StorageVersions...)
		for _, v := range s.Spec.Versions {
			if v.Storage {
				versions.Insert(v.Name)
			}
		}
		r.StorageVersions = sets.List(versions)
		resources = append(resources, r)
	}
	b.Status.ExportPermissionClaims = export.Spec.PermissionClaims
	setStatusClaimAnnotations(b, export)
	switch {
	case len(missing) > 0:
		conditionsv1alpha1.MarkFalse(b, apisv1alpha1.BindingUpToDate, apisv1alpha1.APIResourceSchemaInvalidReason, conditionsv1alpha1.ConditionSeverityError,
			"APIResourceSchema %s of APIExport %s not found in workspace %s", strings.Join(missing, ", "), ref.Name, path)
		notYet()
		return reconciler.Result{RequeueAfter: retryUnresolved}
	case len(conflicts) > 0:
		conditionsv1alpha1.MarkFalse(b, apisv1alpha1.BindingUpToDate, apisv1alpha1.NamingConflictsReason, conditionsv1alpha1.ConditionSeverityError,
			"%s", strings.Join(conflicts, "; "))
		notYet()
		return reconciler.Result{}
	}
	sort.Slice(resources, func(i, j int) bool {
		if resources[i].Group != resources[j].Group {
			return resources[i].Group < resources[j].Group
		}
		return resources[i].Resource < resources[j].Resource
	})
	b.Status.BoundResources = resources
	b.Status.AppliedPermissionClaims = acceptedClaims(b.Spec.PermissionClaims, export.Spec.PermissionClaims)
	setStatusClaimAnnotations(b, export)
	b.Status.Phase = apisv1alpha1.APIBindingPhaseBound
	conditionsv1alpha1.MarkTrue(b, apisv1alpha1.BindingUpToDate)
	conditionsv1alpha1.MarkTrue(b, apisv1alpha1.InitialBindingCompleted)
	return reconciler.Result{}
}

// conflict tells what else serves gr in cluster: a built-in resource, a
// CRD of the cluster, or another binding; "" if nothing.
func (c *Controller) conflict(cluster logicalcluster.Name, binding string, gr schema.GroupResource, identity string) string {
	if c.cfg.Builtin != nil && c.cfg.Builtin(gr.Group, gr.Resource, identity) {
		return fmt.Sprintf("%s conflicts with a built-in resource", gr)
	}
	if _, err := c.crds.Lister().Cluster(cluster).Get(gr.Resource + "." + gr.Group); err == nil {
		return fmt.Sprintf("%s conflicts with CustomResourceDefinition %s.%s", gr, gr.Resource, gr.Group)
	}
	objs, _ := c.bindings.Informer().GetIndexer().ByIndex(ByBoundResource, BoundResourceKey(cluster, gr.Group, gr.Resource))
	for _, o := range objs {
		if other, ok := o.(*apisv1alpha1.APIBinding); ok && other.Name != binding {
			return fmt.Sprintf("%s conflicts with APIBinding %s, which binds it already", gr, other.Name)
		}
	}
	return ""
}

// acceptedClaims are the claims of the export that the binding accepts.
func acceptedClaims(answers []apisv1alpha1.AcceptablePermissionClaim, claims []apisv1alpha1.PermissionClaim) []apisv1alpha1.PermissionClaim {
	var out []apisv1alpha1.PermissionClaim
	for _, claim := range claims {
		for _, a := range answers {
			if a.State == apisv1alpha1.ClaimAccepted && a.EqualGRI(claim) &&
				equality.Semantic.DeepEqual(a.ResourceSelector, claim.ResourceSelector) && a.All == claim.All {
				out = append(out, claim)
				break
			}
		}
	}
	return out
}

// summarize sets the Ready condition kcp's clients (and the READY column)
// read. As in kcp, it mirrors InitialBindingCompleted only: conditions that
// turn False after the binding first completed (the export gone, a claim
// mismatch) do not take the binding's readiness away, since what it bound
// is still served.
func summarize(b *apisv1alpha1.APIBinding) {
	c := conditionsv1alpha1.Get(b, apisv1alpha1.InitialBindingCompleted)
	if c == nil {
		return
	}
	ready := *c
	ready.Type = conditionsv1alpha1.ReadyCondition
	conditionsv1alpha1.Set(b, &ready)
}
