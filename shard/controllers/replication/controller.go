package replication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// Config is what the controller needs.
type Config struct {
	// Shard is this shard's name; its replicas live under
	// /services/cache/shards/<Shard>.
	Shard string
	// Local is the shard's informer factory.
	Local *informers.SharedInformerFactory
	// Cache reaches the cache server (its base URL, no path) as a member
	// of system:masters.
	Cache *rest.Config
	// PathOf returns the canonical path of a local logical cluster, "" if
	// unknown.
	PathOf func(logicalcluster.Name) string
}

// byRole indexes ClusterRoleBindings by cluster|role name.
const byRole = "replication.tessera.dev/role"

func roleIndex(obj any) ([]string, error) {
	b, ok := obj.(*rbacv1.ClusterRoleBinding)
	if !ok || b.RoleRef.Kind != "ClusterRole" {
		return nil, nil
	}
	return []string{informers.ToKey(logicalcluster.From(b), "", b.RoleRef.Name)}, nil
}

// Controller replicates the shard's objects to the cache server.
type Controller struct {
	cfg       Config
	factory   *informers.SharedInformerFactory
	client    rest.Interface
	resources []*resource
	roles     cache.SharedIndexInformer
	bindings  cache.SharedIndexInformer

	// mu guards resources and running: Replicate adds resources while the
	// controller runs.
	mu sync.Mutex
	// running is Run's context once it runs; wg waits for the resources'
	// controllers.
	running context.Context
	wg      sync.WaitGroup
}

// resource replicates one kind.
type resource struct {
	*reconciler.Controller
	r      replicated.Resource
	local  cache.SharedIndexInformer
	cached cache.SharedIndexInformer
	// wanted tells whether a local object is replicated; nil: all are.
	wanted func(runtime.Object) bool
}

// New wires the controller. Its informers on the cache are its own
// (Start runs them); those on the shard come from cfg.Local.
func New(cfg Config) (*Controller, error) {
	if cfg.Shard == "" || cfg.Local == nil || cfg.Cache == nil || cfg.PathOf == nil {
		return nil, errors.New("replication: Shard, Local, Cache and PathOf are required")
	}
	scoped := rest.CopyConfig(cfg.Cache)
	scoped.Host += cacheserver.ScopeURL(cfg.Shard, "*")
	dyn, err := dynamic.NewForConfig(scoped)
	if err != nil {
		return nil, fmt.Errorf("replication: cache client: %w", err)
	}
	raw := rest.CopyConfig(cfg.Cache)
	raw.GroupVersion = &schema.GroupVersion{}
	raw.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.RESTClientFor(raw)
	if err != nil {
		return nil, fmt.Errorf("replication: cache client: %w", err)
	}
	c := &Controller{
		cfg:     cfg,
		factory: informers.NewSharedInformerFactory(informers.Clients{Dynamic: dyn}, 0),
		client:  client,
	}
	local := cfg.Local
	c.roles = local.ClusterRoles().Informer()
	c.bindings = local.ClusterRoleBindings().Informer()
	if err := c.bindings.AddIndexers(cache.Indexers{byRole: roleIndex}); err != nil {
		return nil, err
	}
	lcs := local.LogicalClusters()
	sources := map[string]cache.SharedIndexInformer{
		"apiexports":              local.APIExports().Informer(),
		"apiresourceschemas":      local.APIResourceSchemas().Informer(),
		"apiexportendpointslices": local.APIExportEndpointSlices().Informer(),
		"shards":                  local.Shards().Informer(),
		"logicalclusters":         lcs.Informer(),
		"workspacetypes":          local.WorkspaceTypes().Informer(),
		"clusterroles":            c.roles,
		"clusterrolebindings":     c.bindings,
	}
	for _, r := range replicated.Resources() {
		src, ok := sources[r.Resource]
		if r.Bound {
			// Replicate adds them.
			continue
		}
		if !ok {
			return nil, fmt.Errorf("replication: no informer for %s", r.GroupResource())
		}
		res, err := c.newResource(r, src)
		if err != nil {
			return nil, err
		}
		c.resources = append(c.resources, res)
	}
	// A binding decides whether its role is replicated (maximal permission
	// policies), and a role whether its bindings are.
	roles, bindings := c.resource("clusterroles"), c.resource("clusterrolebindings")
	if err := roles.Watch(c.bindings, reconciler.EnqueueMappedHandler(roles.Controller, func(b *rbacv1.ClusterRoleBinding) []reconciler.Key {
		return []reconciler.Key{{Cluster: logicalcluster.From(b), Name: b.RoleRef.Name}}
	})); err != nil {
		return nil, err
	}
	if err := bindings.Watch(c.roles, reconciler.EnqueueMappedHandler(bindings.Controller, func(r *rbacv1.ClusterRole) []reconciler.Key {
		objs, _ := c.bindings.GetIndexer().ByIndex(byRole, informers.ToKey(logicalcluster.From(r), "", r.Name))
		keys := make([]reconciler.Key, 0, len(objs))
		for _, o := range objs {
			if k, err := reconciler.KeyFor(o); err == nil {
				keys = append(keys, k)
			}
		}
		return keys
	})); err != nil {
		return nil, err
	}
	return c, nil
}

// newResource builds the replication of one resource from the shard's
// informer local.
func (c *Controller) newResource(r replicated.Resource, local cache.SharedIndexInformer) (*resource, error) {
	res := &resource{r: r, local: local, cached: c.factory.ForResource(r.GroupVersionResource).Informer()}
	res.Controller = reconciler.New("replication-"+r.Resource, reconciler.Func(func(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
		err := c.reconcile(ctx, res, key)
		if apierrors.IsConflict(err) {
			// The cache's informer is behind; its event or this retry
			// brings the new version.
			return reconciler.Result{RequeueAfter: 50 * time.Millisecond}, nil
		}
		return reconciler.Result{}, err
	}), reconciler.Options{Workers: 2})
	switch r.Resource {
	case "clusterroles":
		res.wanted = func(obj runtime.Object) bool { return c.roleWanted(obj.(*rbacv1.ClusterRole)) }
	case "clusterrolebindings":
		res.wanted = func(obj runtime.Object) bool { return c.bindingWanted(obj.(*rbacv1.ClusterRoleBinding)) }
	}
	if err := res.Watch(res.local, res.EnqueueHandler()); err != nil {
		return nil, err
	}
	if err := res.Watch(res.cached, res.EnqueueHandler()); err != nil {
		return nil, err
	}
	return res, nil
}

// Replicate replicates a bound resource (replicated.Resource.Bound, by
// its resource name) from local, the shard's informer of it under the
// identity of root's export, from now on. The caller starts local.
// Calling it again for the same resource does nothing.
func (c *Controller) Replicate(resource string, local cache.SharedIndexInformer) error {
	var r *replicated.Resource
	for _, candidate := range replicated.Resources() {
		if candidate.Bound && candidate.Resource == resource {
			r = &candidate
		}
	}
	if r == nil {
		return fmt.Errorf("replication: %s is not a bound replicated resource", resource)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, existing := range c.resources {
		if existing.r.Resource == resource {
			return nil
		}
	}
	res, err := c.newResource(*r, local)
	if err != nil {
		return err
	}
	c.resources = append(c.resources, res)
	if c.running != nil {
		c.factory.Start(c.running)
		c.wg.Go(func() { _ = res.Run(c.running) })
	}
	return nil
}

func (c *Controller) resource(name string) *resource {
	for _, r := range c.resources {
		if r.r.Resource == name {
			return r
		}
	}
	panic("replication: unknown resource " + name)
}

// Name implements the shard's runner.
func (c *Controller) Name() string { return "replication" }

// Run starts the informers on the cache and replicates until ctx is done.
func (c *Controller) Run(ctx context.Context) error {
	c.mu.Lock()
	c.running = ctx
	c.factory.Start(ctx)
	for _, r := range c.resources {
		c.wg.Go(func() { _ = r.Run(ctx) })
	}
	c.mu.Unlock()
	<-ctx.Done()
	c.wg.Wait()
	c.factory.Shutdown()
	return nil
}

// roleWanted: the role grants access to exports or types by name, or a
// maximal permission policy binding of its cluster binds it.
func (c *Controller) roleWanted(r *rbacv1.ClusterRole) bool {
	for _, rule := range r.Rules {
		if grantsKCPAccess(rule) {
			return true
		}
	}
	objs, _ := c.bindings.GetIndexer().ByIndex(byRole, informers.ToKey(logicalcluster.From(r), "", r.Name))
	for _, o := range objs {
		if b, ok := o.(*rbacv1.ClusterRoleBinding); ok && grantsToPolicyUser(b) {
			return true
		}
	}
	return false
}

// bindingWanted: the binding binds a replicated role of its cluster.
func (c *Controller) bindingWanted(b *rbacv1.ClusterRoleBinding) bool {
	if b.RoleRef.Kind != "ClusterRole" {
		return false
	}
	if grantsToPolicyUser(b) {
		return true
	}
	obj, ok, _ := c.roles.GetIndexer().GetByKey(informers.ToKey(logicalcluster.From(b), "", b.RoleRef.Name))
	if !ok {
		return false
	}
	role, ok := obj.(*rbacv1.ClusterRole)
	return ok && c.roleWanted(role)
}

// reconcile makes the cache's replica of key match the local object.
func (c *Controller) reconcile(ctx context.Context, res *resource, key reconciler.Key) error {
	if !Replicated(key.Cluster) {
		return nil
	}
	var local runtime.Object
	if obj, ok, err := res.local.GetIndexer().GetByKey(key.String()); err != nil {
		return err
	} else if ok {
		local = obj.(runtime.Object)
		if res.wanted != nil && !res.wanted(local) {
			local = nil
		}
	}
	var cached *unstructured.Unstructured
	if obj, ok, err := res.cached.GetIndexer().GetByKey(key.String()); err != nil {
		return err
	} else if ok {
		cached = obj.(*unstructured.Unstructured)
	}
	path := c.cfg.PathOf(key.Cluster)
	switch {
	case local == nil && cached == nil:
		return nil
	case local == nil:
		err := c.client.Delete().AbsPath(c.path(res.r, key.Cluster, key.Name)).Do(ctx).Error()
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	desired, err := replica(local, res.r.GroupVersionKind(), path)
	if err != nil {
		return reconciler.TerminalError(err)
	}
	if cached != nil {
		if upToDate(desired, cached) {
			return nil
		}
		desired.SetResourceVersion(cached.GetResourceVersion())
		return c.write(ctx, res.r, key, desired, true)
	}
	err = c.write(ctx, res.r, key, desired, false)
	if apierrors.IsAlreadyExists(err) {
		// Replicated before the informer saw it: take its version.
		body, gerr := c.client.Get().AbsPath(c.path(res.r, key.Cluster, key.Name)).Do(ctx).Raw()
		if gerr != nil {
			return gerr
		}
		var existing unstructured.Unstructured
		if gerr := json.Unmarshal(body, &existing.Object); gerr != nil {
			return gerr
		}
		if upToDate(desired, &existing) {
			return nil
		}
		desired.SetResourceVersion(existing.GetResourceVersion())
		return c.write(ctx, res.r, key, desired, true)
	}
	return err
}

// write creates or updates a replica.
func (c *Controller) write(ctx context.Context, r replicated.Resource, key reconciler.Key, obj *unstructured.Unstructured, update bool) error {
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return reconciler.TerminalError(err)
	}
	req := c.client.Post().AbsPath(c.path(r, key.Cluster, ""))
	if update {
		req = c.client.Put().AbsPath(c.path(r, key.Cluster, key.Name))
	}
	return req.SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
}

// path is the cache server path of a replica (or of its collection, name
// empty).
func (c *Controller) path(r replicated.Resource, cluster logicalcluster.Name, name string) string {
	p := cacheserver.ScopeURL(c.cfg.Shard, cluster.String()) + "/apis/" + r.Group + "/" + r.Version + "/" + r.Resource
	if name != "" {
		p += "/" + name
	}
	return p
}
