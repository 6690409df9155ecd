package server

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/lru"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/authorization/maximalpermission"
	"github.com/tessera-dev/tessera/shard/controllers/apibinding"
	"github.com/tessera-dev/tessera/shard/customresources"
	"github.com/tessera-dev/tessera/shard/storage"
)

// Resources bound through APIBindings are served like CRDs: the custom
// resource handler, discovery and OpenAPI get a CustomResourceDefinition
// made of the bound APIResourceSchema (apisv1alpha1.CRDFromSchema) with the
// annotations kcp puts on its bound CRDs, among them the export's identity,
// under which the objects are stored. Such a CRD is never stored: it is
// built once per (schema, identity) and shared by every logical cluster
// that binds it, so a binding costs an index entry and nothing else.

// boundCRDs builds and keeps the CRDs that serve bound resources, one per
// (schema, identity), in an LRU: a CRD is rebuilt when its schema's UID or
// resourceVersion changes.
type boundCRDs struct {
	mu    sync.Mutex
	cache *lru.Cache
}

// boundCRDKey identifies a bound CRD.
type boundCRDKey struct {
	schemaCluster logicalcluster.Name
	schemaName    string
	identity      string
}

func newBoundCRDs() *boundCRDs { return &boundCRDs{cache: lru.New(4096)} }

// get returns the CRD that serves schema under identity. Callers must not
// modify it.
func (b *boundCRDs) get(schema *apisv1alpha1.APIResourceSchema, identity string) (*apiextensionsv1.CustomResourceDefinition, error) {
	schemaCluster := logicalcluster.From(schema)
	key := boundCRDKey{schemaCluster: schemaCluster, schemaName: schema.Name, identity: identity}
	b.mu.Lock()
	if v, ok := b.cache.Get(key); ok {
		crd := v.(*apiextensionsv1.CustomResourceDefinition)
		if crd.Annotations[apisv1alpha1.AnnotationSchemaNameKey] == schema.Name && crd.ResourceVersion == schema.ResourceVersion && crd.UID == boundCRDUID(schema, identity) {
			b.mu.Unlock()
			return crd, nil
		}
	}
	b.mu.Unlock()
	crd, err := boundCRD(schema, identity)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.cache.Add(key, crd)
	b.mu.Unlock()
	return crd, nil
}

// boundCRDUID is the UID of the CRD that serves schema under identity: the
// schema's, made distinct per identity, so that the serving state of a
// resource is rebuilt when it is bound again through another export.
func boundCRDUID(schema *apisv1alpha1.APIResourceSchema, identity string) types.UID {
	short := identity
	if len(short) > 16 {
		short = short[:16]
	}
	return types.UID(string(schema.UID) + "-" + short)
}

// boundCRD builds the CRD that serves schema under identity, Established
// and with its names accepted.
func boundCRD(schema *apisv1alpha1.APIResourceSchema, identity string) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd, err := apisv1alpha1.CRDFromSchema(schema, schema.Spec.Group)
	if err != nil {
		return nil, fmt.Errorf("APIResourceSchema %s|%s: %w", logicalcluster.From(schema), schema.Name, err)
	}
	crd.UID = boundCRDUID(schema, identity)
	crd.ResourceVersion = schema.ResourceVersion
	crd.Generation = 1
	crd.CreationTimestamp = schema.CreationTimestamp
	crd.Annotations = map[string]string{
		logicalcluster.AnnotationKey:            logicalcluster.From(schema).String(),
		apisv1alpha1.AnnotationBoundCRDKey:      "",
		apisv1alpha1.AnnotationSchemaClusterKey: logicalcluster.From(schema).String(),
		apisv1alpha1.AnnotationSchemaNameKey:    schema.Name,
		apisv1alpha1.AnnotationAPIIdentityKey:   identity,
	}
	now := schema.CreationTimestamp
	crd.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{
		{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found", LastTransitionTime: now},
		{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted", LastTransitionTime: now},
	}
	return crd, nil
}

// boundCRDFor returns the CRD that serves group/resource in cluster through
// an APIBinding, or NotFound. When several bindings claim the resource
// (the binding controller reports such conflicts), the oldest serves it.
func (s *Server) boundCRDFor(cluster logicalcluster.Name, group, resource string) (*apiextensionsv1.CustomResourceDefinition, error) {
	notFound := apierrors.NewNotFound(apiextensionsv1.Resource("customresourcedefinitions"), resource+"."+group)
	if s.apiBindings.Informer() == nil {
		return nil, notFound
	}
	bindings, err := bindingsServing(s.apiBindings.Informer().GetIndexer(), cluster, group, resource)
	if err != nil {
		return nil, err
	}
	for _, b := range bindings {
		for i := range b.Status.BoundResources {
			r := &b.Status.BoundResources[i]
			if r.Group != group || r.Resource != resource {
				continue
			}
			crd, err := s.boundCRDOf(b, r)
			if err != nil {
				return nil, err
			}
			if crd != nil {
				return crd, nil
			}
		}
	}
	return nil, notFound
}

// boundCRDOf returns the CRD of one bound resource of a binding; nil when
// its schema is gone or was replaced by another of the same name.
func (s *Server) boundCRDOf(b *apisv1alpha1.APIBinding, r *apisv1alpha1.BoundAPIResource) (*apiextensionsv1.CustomResourceDefinition, error) {
	exportCluster := logicalcluster.Name(b.Status.APIExportClusterName)
	schema, err := s.apiResourceSchemas.Lister().Cluster(exportCluster).Get(r.Schema.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if string(schema.UID) != r.Schema.UID {
		return nil, nil
	}
	return s.boundCRDs.get(schema, r.Schema.IdentityHash)
}

// boundCRDsOf returns the CRDs of every resource bound in cluster, by name.
func (s *Server) boundCRDsOf(cluster logicalcluster.Name) (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	if s.apiBindings.Informer() == nil {
		return nil, nil
	}
	bindings, err := s.apiBindings.Lister().Cluster(cluster).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	sortOldestFirst(bindings)
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, b := range bindings {
		for i := range b.Status.BoundResources {
			r := &b.Status.BoundResources[i]
			name := r.Resource + "." + r.Group
			if _, ok := out[name]; ok {
				continue
			}
			crd, err := s.boundCRDOf(b, r)
			if err != nil {
				return nil, err
			}
			if crd != nil {
				out[name] = crd
			}
		}
	}
	return out, nil
}

// bindingsServing returns the bindings whose status binds group/resource
// in cluster, oldest first: the first serves it (the binding controller
// reports the others' conflict).
func bindingsServing(indexer cache.Indexer, cluster logicalcluster.Name, group, resource string) ([]*apisv1alpha1.APIBinding, error) {
	objs, err := indexer.ByIndex(apibinding.ByBoundResource, apibinding.BoundResourceKey(cluster, group, resource))
	if err != nil {
		return nil, err
	}
	bindings := make([]*apisv1alpha1.APIBinding, 0, len(objs))
	for _, o := range objs {
		if b, ok := o.(*apisv1alpha1.APIBinding); ok {
			bindings = append(bindings, b)
		}
	}
	sortOldestFirst(bindings)
	return bindings, nil
}

func sortOldestFirst(bindings []*apisv1alpha1.APIBinding) {
	sort.Slice(bindings, func(i, j int) bool {
		ti, tj := bindings[i].CreationTimestamp, bindings[j].CreationTimestamp
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return bindings[i].Name < bindings[j].Name
	})
}

// bindingEvents drops the serving state and documents of the resources a
// binding binds whenever what it binds changes: the same as a CRD change.
func (s *Server) bindingEvents() cache.ResourceEventHandler {
	invalidate := func(b *apisv1alpha1.APIBinding) {
		cluster := logicalcluster.From(b)
		for _, r := range b.Status.BoundResources {
			s.customResources.Invalidate(cluster, r.Resource+"."+r.Group)
		}
		for _, f := range s.onCRDChange {
			f(cluster)
		}
	}
	binding := func(obj any) *apisv1alpha1.APIBinding {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		b, _ := obj.(*apisv1alpha1.APIBinding)
		return b
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if b := binding(obj); b != nil && len(b.Status.BoundResources) > 0 {
				invalidate(b)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			old, b := binding(oldObj), binding(obj)
			if old == nil || b == nil {
				return
			}
			if equality.Semantic.DeepEqual(old.Status.BoundResources, b.Status.BoundResources) &&
				old.Status.APIExportClusterName == b.Status.APIExportClusterName {
				return
			}
			invalidate(old)
			invalidate(b)
		},
		DeleteFunc: func(obj any) {
			if b := binding(obj); b != nil {
				invalidate(b)
			}
		},
	}
}

// schemaEvents drops the serving state of bound resources whose schema
// was deleted (a schema cannot change otherwise).
func (s *Server) schemaEvents() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			schema, ok := obj.(*apisv1alpha1.APIResourceSchema)
			if !ok || s.apiBindings.Informer() == nil {
				return
			}
			// Every binding of the schema's export cluster may use it.
			all, err := s.apiBindings.Lister().List(labels.Everything())
			if err != nil {
				return
			}
			for _, b := range all {
				if b.Status.APIExportClusterName != logicalcluster.From(schema).String() {
					continue
				}
				for _, r := range b.Status.BoundResources {
					if r.Schema.Name == schema.Name {
						s.customResources.Invalidate(logicalcluster.From(b), r.Resource+"."+r.Group)
						for _, f := range s.onCRDChange {
							f(logicalcluster.From(b))
						}
					}
				}
			}
		},
	}
}

// deleteBoundObjects range-deletes the stored objects of a bound resource
// in a logical cluster (for the binding controller, when the resource is
// no longer served and the API cannot delete them).
func (s *Server) deleteBoundObjects(ctx context.Context, cluster logicalcluster.Name, gr schema.GroupResource, identity string) error {
	if !cluster.IsValid() || identity == "" {
		return fmt.Errorf("refusing to delete the %s objects of identity %q in logical cluster %q", gr, identity, cluster)
	}
	if s.core.isCore(gr, identity) {
		// kcp's own APIs stay served by the shard (to its admins): deleted
		// through the API, so that Workspaces take their logical clusters
		// with them.
		client, err := s.dynamicClients.For(cluster)
		if err != nil {
			return err
		}
		gvr := gr.WithVersion("v1alpha1")
		return client.Resource(gvr).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
	prefix := storage.ClusterPrefix(s.EtcdPrefix, storage.BoundResourcePrefix(gr, identity), cluster)
	_, err := s.etcdClient.Delete(ctx, prefix, clientv3.WithPrefix())
	return err
}

// boundPrefixes returns the key prefixes (below the storage prefix) of the
// resources bound anywhere on the shard, for the object-count scanner.
func (s *Server) boundPrefixes() []string {
	if s.apiBindings.Informer() == nil {
		return nil
	}
	all, err := s.apiBindings.Lister().List(labels.Everything())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, b := range all {
		for _, r := range b.Status.BoundResources {
			if s.core.isCoreIdentity(r.Schema.IdentityHash) {
				// Counted under the built-in prefixes.
				continue
			}
			p := storage.BoundResourcePrefix(schema.GroupResource{Group: r.Group, Resource: r.Resource}, r.Schema.IdentityHash)
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// boundBy returns the oldest binding that serves group/resource in
// cluster, "" if none.
func (s *Server) boundBy(cluster logicalcluster.Name, group, resource string) string {
	bindings, err := bindingsServing(s.apiBindings.Informer().GetIndexer(), cluster, group, resource)
	if err != nil || len(bindings) == 0 {
		return ""
	}
	return bindings[0].Name
}

// identityCRDs returns the CRDs of group/resource exported with identity:
// those of the exports' latest schemas and those bindings still use.
func (s *Server) identityCRDs(group, resource, identity string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	seen := map[types.UID]bool{}
	add := func(schema *apisv1alpha1.APIResourceSchema) error {
		if schema.Spec.Group != group || schema.Spec.Names.Plural != resource || seen[schema.UID] {
			return nil
		}
		seen[schema.UID] = true
		crd, err := s.boundCRDs.get(schema, identity)
		if err != nil {
			return err
		}
		out = append(out, crd)
		return nil
	}
	exports, err := s.apiExports.Informer().GetIndexer().ByIndex(apibinding.ByExportIdentity, identity)
	if err != nil {
		return nil, err
	}
	for _, o := range exports {
		e, ok := o.(*apisv1alpha1.APIExport)
		if !ok {
			continue
		}
		for _, name := range e.Spec.LatestResourceSchemas {
			schema, err := s.apiResourceSchemas.Lister().Cluster(logicalcluster.From(e)).Get(name)
			if err != nil {
				continue
			}
			if err := add(schema); err != nil {
				return nil, err
			}
		}
	}
	// The schemas bindings still use, from the distinct values of the
	// identity index rather than from every binding.
	name := resource + "." + group
	for _, value := range s.apiBindings.Informer().GetIndexer().ListIndexFuncValues(apibinding.ByIdentity) {
		k, ok := apibinding.ParseBoundSchema(value)
		if !ok || k.Identity != identity || k.Name != name {
			continue
		}
		schema, err := s.apiResourceSchemas.Lister().Cluster(k.SchemaCluster).Get(k.Schema)
		if err != nil || string(schema.UID) != k.SchemaUID {
			continue
		}
		if err := add(schema); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// boundExports finds the export through which a resource is bound in a
// logical cluster, for the maximal permission policy: from the APIBinding
// informer's ByBoundResource index (added by the server before the
// informers start) and the APIExport informer.
func boundExports(f *informers.SharedInformerFactory) maximalpermission.BoundExport {
	bindings, exports := f.APIBindings(), f.APIExports()
	return func(cluster logicalcluster.Name, group, resource string) (*apisv1alpha1.APIExport, bool) {
		list, err := bindingsServing(bindings.Informer().GetIndexer(), cluster, group, resource)
		if err != nil || len(list) == 0 || list[0].Spec.Reference.Export == nil {
			return nil, false
		}
		b := list[0]
		e, err := exports.Lister().Cluster(logicalcluster.Name(b.Status.APIExportClusterName)).Get(b.Spec.Reference.Export.Name)
		if err != nil {
			return nil, false
		}
		return e, true
	}
}

// boundIdentities returns the identities under which group/resource is
// bound anywhere on the shard, sorted.
func (s *Server) boundIdentities(group, resource string) ([]string, error) {
	// The values of the identity index are the (identity, resource) pairs
	// bound on the shard, a handful, however many bindings there are.
	name := resource + "." + group
	set := map[string]bool{}
	for _, value := range s.apiBindings.Informer().GetIndexer().ListIndexFuncValues(apibinding.ByIdentity) {
		if k, ok := apibinding.ParseBoundSchema(value); ok && k.Name == name {
			set[k.Identity] = true
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// wildcardBoundCRDs returns, for discovery and OpenAPI at /clusters/*, the
// synthetic CRD of every bound resource that no cluster's CRD serves and
// that is bound under one identity only: requests across all clusters
// without an identity are served from that identity
// (customresources.Config.BoundIdentities).
func (s *Server) wildcardBoundCRDs(skip map[string]bool) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	identities := map[string][]string{} // <plural>.<group> -> identities
	for _, value := range s.apiBindings.Informer().GetIndexer().ListIndexFuncValues(apibinding.ByIdentity) {
		if k, ok := apibinding.ParseBoundSchema(value); ok && !slices.Contains(identities[k.Name], k.Identity) {
			identities[k.Name] = append(identities[k.Name], k.Identity)
		}
	}
	names := make([]string, 0, len(identities))
	for name := range identities {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range names {
		ids := identities[name]
		if skip[name] || len(ids) != 1 {
			continue
		}
		resource, group, ok := strings.Cut(name, ".")
		if !ok {
			continue
		}
		crds, err := s.identityCRDs(group, resource, ids[0])
		if err != nil {
			return nil, err
		}
		if crd := customresources.WildcardCRD(name, crds); crd != nil {
			out = append(out, crd)
		}
	}
	return out, nil
}

// boundWildcardCRD returns the synthetic CRD with which requests across all
// clusters serve the bound resource named <plural>.<group>, for the garbage
// collector's monitors: none when it is not bound, bound under several
// identities, or when a cluster's CRD has the name.
func (s *Server) boundWildcardCRD(name string) []*apiextensionsv1.CustomResourceDefinition {
	resource, group, ok := strings.Cut(name, ".")
	if !ok {
		return nil
	}
	ids, err := s.boundIdentities(group, resource)
	if err != nil || len(ids) != 1 {
		return nil
	}
	crds, err := s.identityCRDs(group, resource, ids[0])
	if err != nil {
		return nil
	}
	if crd := customresources.WildcardCRD(name, crds); crd != nil {
		return []*apiextensionsv1.CustomResourceDefinition{crd}
	}
	return nil
}

// boundResourceNames returns the <plural>.<group> of the resources a
// binding binds.
func boundResourceNames(obj any) []string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	b, ok := obj.(*apisv1alpha1.APIBinding)
	if !ok {
		return nil
	}
	names := make([]string, 0, len(b.Status.BoundResources))
	for _, r := range b.Status.BoundResources {
		names = append(names, r.Resource+"."+r.Group)
	}
	return names
}
