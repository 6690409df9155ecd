package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
	"github.com/tessera-dev/tessera/shard/controllers/apiexport"
	"github.com/tessera-dev/tessera/shard/storage"
)

// kcp's own APIs are APIs as a service, as in kcp: root holds the APIExports
// tenancy.kcp.io, topology.kcp.io and shards.core.kcp.io, and a logical
// cluster serves Workspaces, WorkspaceTypes, Partitions and PartitionSets
// only through an APIBinding to them (the bootstrap WorkspaceTypes bind
// tenancy.kcp.io and topology.kcp.io by default; root binds all three).
//
// Their objects are still served by the shard's typed registries (the
// workspace admission, strategies and controllers need them), stored under
// the exports' identities as every bound resource is:
//
//	/registry/tenancy.kcp.io/workspaces/<identityHash>/<cluster>/<name>
//
// so the identities must be known before the registries are built: the
// root shard creates the identity Secrets (kcp-system/<export> in root) in
// etcd on first start, before it serves anything, and reads them on every
// start. Root and the system logical clusters always serve them; elsewhere
// a request for them without the binding gets 404, and discovery lists
// them only where they are bound. Shards are the exception: the shard
// serves them everywhere, as before, since nothing but root has any.

// coreExport is one of root's APIExports of kcp's own APIs.
type coreExport struct {
	name      string
	resources []schema.GroupResource
	// gated: served only where bound (outside root and system clusters).
	gated bool
	// maximalPermissionPolicy: the export has a local maximal permission
	// policy (kcp's tenancy.kcp.io does).
	maximalPermissionPolicy bool
}

var coreExports = []coreExport{
	{
		name:                    "tenancy.kcp.io",
		resources:               []schema.GroupResource{{Group: "tenancy.kcp.io", Resource: "workspaces"}, {Group: "tenancy.kcp.io", Resource: "workspacetypes"}},
		gated:                   true,
		maximalPermissionPolicy: true,
	},
	{
		name:      "topology.kcp.io",
		resources: []schema.GroupResource{{Group: "topology.kcp.io", Resource: "partitions"}, {Group: "topology.kcp.io", Resource: "partitionsets"}},
		gated:     true,
	},
	{
		name:      "shards.core.kcp.io",
		resources: []schema.GroupResource{{Group: "core.kcp.io", Resource: "shards"}},
	},
}

// gatedGroups are the API groups served only where bound.
func gatedGroups() []string {
	var out []string
	for _, e := range coreExports {
		if e.gated {
			for _, r := range e.resources {
				if len(out) == 0 || out[len(out)-1] != r.Group {
					out = append(out, r.Group)
				}
			}
		}
	}
	return out
}

// coreIdentities are the identity hashes of the core exports, by export
// name and by resource.
type coreIdentities struct {
	byExport   map[string]string
	byResource map[schema.GroupResource]string
	gated      map[schema.GroupResource]bool
}

// of returns the core identity of a resource, "" if it is not a core one.
func (c *coreIdentities) of(gr schema.GroupResource) string {
	if c == nil {
		return ""
	}
	return c.byResource[gr]
}

// isCore tells whether identity is the identity of a core export serving
// gr.
func (c *coreIdentities) isCore(gr schema.GroupResource, identity string) bool {
	id := c.of(gr)
	return id != "" && id == identity
}

// isCoreIdentity tells whether identity is one of the core exports'.
func (c *coreIdentities) isCoreIdentity(identity string) bool {
	if c == nil {
		return false
	}
	for _, id := range c.byExport {
		if id == identity {
			return true
		}
	}
	return false
}

// coreIdentityTimeout bounds reading or creating the identity Secrets.
const coreIdentityTimeout = 30 * time.Second

// loadCoreIdentities learns the identities of the core exports and points
// the storage of the core resources at them. It runs before the registries
// are built. The root shard keeps them as identity Secrets in root,
// creating them when missing; a joining shard reads them from root
// (joinedCoreIdentities).
func (s *Server) loadCoreIdentities(ctx context.Context) error {
	var (
		hashes map[string]string
		err    error
	)
	if s.Options.IsRoot() {
		hashes, err = s.ownCoreIdentities(ctx)
	} else {
		hashes, err = s.joinedCoreIdentities(ctx)
	}
	if err != nil {
		return err
	}
	ids := &coreIdentities{byExport: map[string]string{}, byResource: map[schema.GroupResource]string{}, gated: map[schema.GroupResource]bool{}}
	if s.Storage.Prefixes == nil {
		s.Storage.Prefixes = map[schema.GroupResource]string{}
	}
	for _, e := range coreExports {
		hash := hashes[e.name]
		if !identityHashRE.MatchString(hash) {
			return fmt.Errorf("the identity of APIExport root:%s is %q, not a hash", e.name, hash)
		}
		ids.byExport[e.name] = hash
		for _, gr := range e.resources {
			ids.byResource[gr] = hash
			ids.gated[gr] = e.gated
			s.Storage.Prefixes[gr] = storage.BoundResourcePrefix(gr, hash)
		}
	}
	s.core = ids
	return s.migrateCoreKeys(ctx)
}

// ownCoreIdentities reads the identity Secrets of the core exports from
// root in etcd, creating them when missing, and returns their hashes by
// export.
func (s *Server) ownCoreIdentities(ctx context.Context) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, coreIdentityTimeout)
	defer cancel()
	secrets := corev1.Resource("secrets")
	opts, err := s.Storage.GetRESTOptions(secrets, &corev1.Secret{})
	if err != nil {
		return nil, err
	}
	raw, destroy, err := generic.NewRawStorage(opts.StorageConfig,
		func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} }, opts.ResourcePrefix)
	if err != nil {
		return nil, err
	}
	defer destroy()
	store := storage.ClusterAware(raw, opts.ResourcePrefix)
	rootCtx := logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: logicalcluster.Root})

	hashes := map[string]string{}
	for _, e := range coreExports {
		key := opts.ResourcePrefix + "/" + apisv1alpha1.IdentitySecretNamespace + "/" + e.name
		secret := &corev1.Secret{}
		err := store.Get(rootCtx, key, k8sstorage.GetOptions{}, secret)
		if k8sstorage.IsNotFound(err) {
			secret, err = createIdentitySecret(rootCtx, store, key, e.name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the identity of APIExport root:%s: %w", e.name, err)
		}
		k := secret.Data[apisv1alpha1.SecretKeyAPIExportIdentity]
		if len(k) == 0 {
			return nil, fmt.Errorf("the identity Secret root:%s/%s has no %q", apisv1alpha1.IdentitySecretNamespace, e.name, apisv1alpha1.SecretKeyAPIExportIdentity)
		}
		hashes[e.name] = apiexport.IdentityHash(k)
	}
	return hashes, nil
}

func createIdentitySecret(ctx context.Context, store k8sstorage.Interface, key, name string) (*corev1.Secret, error) {
	k, err := apiexport.NewIdentityKey()
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: apisv1alpha1.IdentitySecretNamespace, Name: name,
			UID: uuid.NewUUID(), CreationTimestamp: metav1.Now(),
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{apisv1alpha1.SecretKeyAPIExportIdentity: k},
	}
	out := &corev1.Secret{}
	err = store.Create(ctx, key, secret, out, 0)
	if k8sstorage.IsExist(err) {
		// Another process of the same shard won the race.
		err = store.Get(ctx, key, k8sstorage.GetOptions{}, out)
	}
	if err == nil {
		klog.FromContext(ctx).Info("Created the identity of a core APIExport", "export", "root:"+name)
	}
	return out, err
}

// coreKeysMigrated marks, below the storage prefix, that the objects of
// the core resources were moved from "/<group>/<resource>/<cluster>/" (the
// layout before they were bound resources) under their identities.
const coreKeysMigrated = "/tessera/migrations/core-identities"

var identityHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// migrateCoreKeys moves the objects of the core resources stored before
// they had identities, once per data directory.
func (s *Server) migrateCoreKeys(ctx context.Context) error {
	root := strings.TrimSuffix(s.EtcdPrefix, "/")
	marker := root + coreKeysMigrated
	resp, err := s.etcdClient.Get(ctx, marker, clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("reading the migration marker: %w", err)
	}
	if resp.Count > 0 {
		return nil
	}
	moved := 0
	for gr, identity := range s.core.byResource {
		old := root + storage.ResourcePrefix(gr) + "/"
		transformer := s.Storage.Transformer(gr)
		list, err := s.etcdClient.Get(ctx, old, clientv3.WithPrefix())
		if err != nil {
			return fmt.Errorf("listing %s to migrate: %w", old, err)
		}
		for _, kv := range list.Kvs {
			rest := strings.TrimPrefix(string(kv.Key), old)
			first, _, _ := strings.Cut(rest, "/")
			if identityHashRE.MatchString(first) || first == "customresources" {
				continue
			}
			from := string(kv.Key)
			to := old + identity + "/" + rest
			data, _, err := transformer.TransformFromStorage(ctx, kv.Value, value.DefaultContext(from))
			if err != nil {
				return fmt.Errorf("reading %s to migrate it: %w", from, err)
			}
			data, err = transformer.TransformToStorage(ctx, data, value.DefaultContext(to))
			if err != nil {
				return fmt.Errorf("writing %s: %w", to, err)
			}
			_, err = s.etcdClient.Txn(ctx).
				If(clientv3.Compare(clientv3.ModRevision(from), "=", kv.ModRevision)).
				Then(clientv3.OpPut(to, string(data)), clientv3.OpDelete(from)).
				Commit()
			if err != nil {
				return fmt.Errorf("moving %s to %s: %w", from, to, err)
			}
			moved++
		}
	}
	if _, err := s.etcdClient.Put(ctx, marker, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return fmt.Errorf("writing the migration marker: %w", err)
	}
	if moved > 0 {
		klog.FromContext(ctx).Info("Moved the objects of kcp's own APIs under their APIExport identities", "objects", moved)
	}
	return nil
}

// coreServed tells whether a request for gr in cluster is served: always
// for the ungated core resources, root, the system clusters and requests
// across all clusters; elsewhere only when the cluster binds gr under the
// core identity.
func (s *Server) coreServed(cluster logicalcluster.Name, gr schema.GroupResource) bool {
	if s.core == nil || !s.core.gated[gr] || cluster == logicalcluster.Root || cluster == logicalcluster.Wildcard || cluster.IsSystem() {
		return true
	}
	bindings, err := bindingsServing(s.apiBindings.Informer().GetIndexer(), cluster, gr.Group, gr.Resource)
	if err != nil {
		return false
	}
	identity := s.core.of(gr)
	for _, b := range bindings {
		for _, r := range b.Status.BoundResources {
			if r.Group == gr.Group && r.Resource == gr.Resource && r.Schema.IdentityHash == identity {
				return true
			}
		}
	}
	return false
}

// notServed is the answer to a request for a resource a cluster does not
// serve, the one kube-apiserver gives for an unknown path.
func notServed(verb string) error {
	return apierrors.NewGenericServerResponse(404, verb, schema.GroupResource{}, "", "", 0, false)
}

// withCoreGate answers 404 to requests for the gated core resources in a
// logical cluster that does not bind them, except from shard admins (the
// shard's controllers finish what a removed binding leaves behind). It runs
// after authentication, RequestInfo and the cluster filter.
func (s *Server) withCoreGate(handler http.Handler, codecs runtime.NegotiatedSerializer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		info, ok := request.RequestInfoFrom(ctx)
		if !ok || !info.IsResourceRequest || s.core == nil {
			handler.ServeHTTP(w, req)
			return
		}
		gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
		if !s.core.gated[gr] {
			handler.ServeHTTP(w, req)
			return
		}
		cluster, _ := logicalcluster.ClusterFrom(ctx)
		if u, ok := request.UserFrom(ctx); (ok && shardadmin.Is(u)) || cluster.Wildcard || s.coreServed(cluster.Name, gr) {
			handler.ServeHTTP(w, req)
			return
		}
		responsewriters.ErrorNegotiated(notServed(info.Verb), codecs, schema.GroupVersion{Group: info.APIGroup, Version: info.APIVersion}, w, req)
	})
}

// hideGatedAPIs takes the gated core groups out of the generic server's
// discovery and OpenAPI v3 documents, after PrepareRun built them (the v2
// document leaves them out when it is built, withoutGatedPaths): a logical
// cluster lists them only where it binds them, from the bound schemas as
// for any bound resource.
func (s *Server) hideGatedAPIs() {
	g := s.GenericAPIServer
	for _, group := range gatedGroups() {
		g.DiscoveryGroupManager.RemoveGroup(group)
		if g.AggregatedDiscoveryGroupManager != nil {
			g.AggregatedDiscoveryGroupManager.RemoveGroup(group)
		}
		if g.OpenAPIV3VersionedService != nil {
			for _, gv := range s.Scheme.PrioritizedVersionsForGroup(group) {
				g.OpenAPIV3VersionedService.DeleteGroupVersion("apis/" + gv.Group + "/" + gv.Version)
			}
		}
	}
}

func hiddenPath(p string, groups []string) bool {
	for _, group := range groups {
		if strings.HasPrefix(p, "/apis/"+group+"/") || p == "/apis/"+group {
			return true
		}
	}
	return false
}
