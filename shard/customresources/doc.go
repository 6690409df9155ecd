// Package customresources serves custom resources for every logical cluster
// of a shard: each cluster has its own CustomResourceDefinitions, and the same
// group/resource may have different schemas in two clusters, so every request
// is validated, defaulted, pruned and decoded by the schema of its own
// cluster's CRD.
//
// apiextensions-apiserver's crdHandler cannot be reused for this: it has one
// global CRD lister and one storage per CRD name. The Handler here does the
// same work per (logical cluster, CRD) on the stock pieces of
// k8s.io/apiextensions-apiserver (structural schemas, validation, CEL rules,
// defaulting, pruning, the customresource registry, printer columns, None
// conversion) and k8s.io/apiserver's endpoint handlers (get, list, watch,
// create, update, patch including server-side apply, delete,
// deletecollection; status and scale subresources).
//
// # Contract
//
//	type CRDGetter func(cluster logicalcluster.Name, group, resource string) (*apiextensionsv1.CustomResourceDefinition, error)
//	type CRDsNamedGetter func(group, resource string) ([]*apiextensionsv1.CustomResourceDefinition, error)
//	type Config struct {
//		CRDs                CRDGetter                        // required
//		CRDsNamed           CRDsNamedGetter                  // nil: wildcard CR requests get 404
//		RESTOptionsGetter   generic.RESTOptionsGetter        // required, see below
//		Authorizer          authorizer.UnconditionalAuthorizer // required (create-on-update checks)
//		Admission           admission.Interface              // may be nil
//		MaxRequestBodyBytes int64
//		MinRequestTimeout   time.Duration
//		NotFound            http.Handler                     // nil: a NotFound Status
//		IdleTimeout         time.Duration                    // 0: DefaultIdleTimeout
//		MaxEntries          int                              // 0: DefaultMaxEntries
//	}
//	func New(c Config) (*Handler, error)
//	func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request)
//	func (h *Handler) Invalidate(cluster logicalcluster.Name, crdName string)
//	func (h *Handler) Run(ctx context.Context)
//	func (h *Handler) Destroy()
//
// The Handler is installed as the generic API server's NotFound delegate
// (genericapiserver.NewEmptyDelegateWithCustomHandler), and the shard also
// hands it the resource requests below a built-in group that go-restful has
// no route for (shard/server delegateUnroutable), so that CRDs may add
// versions and resources to built-in groups: it sees the requests for
// /apis/<group>/<version>/... and /api/v1/... (CRDs of the core group, such
// as the Services and Pods of kcp's compute export, served as kcp serves
// them; see ServesPath) that no built-in resource serves, after
// authentication and authorization, with the RequestInfo and the logical
// cluster (logicalcluster.ClusterFrom) in the request context. Requests that
// no CRD serves (unknown resource, version not served, CRD without the
// Established=True condition, scope mismatch) go to Config.NotFound; an
// unknown subresource gets a NotFound Status. While a CRD is terminating,
// creates are Forbidden, as upstream. CRDs with webhook conversion are not
// served (a tenant's webhook would be called from inside the shard, and kcp
// does not support them): their requests get a 503 ServiceUnavailable
// Status "conversion webhooks are not supported: ..."; the shard's CRD
// admission should refuse such CRDs in the first place.
//
// Custom resources are read and written as JSON and YAML (and CBOR with
// the CBORServingAndStorage feature), as upstream: a create or update whose
// body is protobuf gets 415 UnsupportedMediaType, an Accept header that
// allows only protobuf gets 406, except for the meta kinds
// (as=PartialObjectMetadata[List]), which are served in protobuf too. A
// write that etcd (or the etcd client) refuses as too large gets 413
// RequestEntityTooLarge.
//
// # Requests across all logical clusters
//
// Requests to /clusters/* (logicalcluster.Cluster.Wildcard) may only list
// and watch whole resources. The CRDs of one name may differ from cluster to
// cluster in schema, versions and even scope, so these requests are served
// schema-agnostically, from a synthetic CRD made of all CRDs of the name
// that Config.CRDsNamed returns:
//
//   - it serves the union of the versions the Established CRDs serve (a
//     version none serves gets 404); the versions they list without
//     serving, or have stored, are known for conversion, so objects stored
//     in them can still be read;
//   - every version's schema is {type: object,
//     x-kubernetes-preserve-unknown-fields: true}: objects come back as
//     stored, with their kcp.io/cluster annotation, neither pruned nor
//     defaulted by another cluster's schema; nothing is validated, since
//     nothing is written;
//   - None conversion (only apiVersion changes), also for CRDs that convert
//     through a webhook: no webhook is ever called;
//   - scope: that of most Established CRDs, Namespaced on a tie (a list
//     across all clusters reads the whole key prefix either way; the scope
//     only decides whether /namespaces/<ns>/ requests are served);
//   - names from the oldest Established CRD; no printer columns (the
//     default Name and Age table), no subresources.
//
// Its serving state is cached like any other, under (*, CRD name), and is
// identified by what the synthetic CRD is made of: a change of one CRD that
// changes none of the above (a schema, a printer column, a status update)
// keeps it and its watches; one that does (a version served or not, a
// scope) rebuilds it, and Invalidate then ends its watches at once.
//
// # Serving state
//
// What a CRD needs to be served (schemas, validators, CEL programs, field
// manager, stores per version) is built on the first request for a
// (cluster, CRD name) and cached in one LRU for the whole shard, which
// keeps at most MaxEntries idle states and never drops one in use (a watch
// holds its state, so watches are never ended to make room, and the
// garbage collector's wildcard watches take no room from tenants). It is
// rebuilt when the CRD's UID or resourceVersion changes,
// and dropped by Invalidate (call it from a CRD informer on add, update and
// delete). An entry unused for IdleTimeout is released lazily by the next
// request, or by the single janitor that Run starts. Nothing is started per
// cluster or per CRD. A released state first ends the watches it serves,
// then destroys its stores once the last request using it has returned.
//
// # Storage
//
// For every served or stored version the Handler asks
// Config.RESTOptionsGetter.GetRESTOptions(<group>/<plural>, an Unstructured)
// for options, and then replaces ResourcePrefix with
// "/<group>/<plural>/customresources", StorageConfig.Codec with an
// unstructured JSON codec that encodes in the CRD's storage version and
// prunes, coerces metadata and defaults on decode, and
// StorageConfig.EncodeVersioner. The getter's Decorator must insert the
// logical cluster of the request context after the resource prefix, so keys
// come out as /registry/<group>/<plural>/customresources/<cluster>/[<ns>/]<name>.
// The getter must answer for any group, also groups no scheme knows; this
// package provides what the shard needs:
//
//	func ResourcePrefix(resource schema.GroupResource) string
//	type RESTOptionsGetter struct {
//		Backend                 storagebackend.Config
//		Transformers            value.ResourceTransformers
//		Decorator               generic.StorageDecorator
//		DeleteCollectionWorkers int
//	}
//	type ClusterLayers func(raw storage.Interface, resourcePrefix string) storage.Interface
//	func NewSharedEtcd(ctx context.Context, c storagebackend.TransportConfig) (*SharedEtcd, error)
//	func (s *SharedEtcd) Decorator(layers ClusterLayers) generic.StorageDecorator
//	func (s *SharedEtcd) Close() error
//
// SharedEtcd builds all custom-resource stores on one etcd client (an etcd3
// store on a shared client is a small struct) instead of one client, with
// its connection and goroutines, per store as generic.NewRawStorage does;
// the ClusterLayers are shard/storage's key scoping and annotation layers.
// shard/storage.Decorator(false) works too, at the cost of a client per
// (cluster, CRD, version).
//
// # Watch cache
//
//	func (s *SharedEtcd) CachingDecorator() generic.StorageDecorator
//	func (s *SharedEtcd) Run(ctx context.Context)
//
// With CachingDecorator (the shard's default, --watch-cache), lists,
// watches and gets with a resourceVersion are served from one upstream
// watch cache per group/resource, shared by every logical cluster and
// every CRD of that name (shard/storage.SharedCache): it holds the objects
// as stored, decoded without a schema, and lists and watches the whole
// key prefix of the group/resource in etcd once. A request of one cluster
// reads its own key range of the cache, and each object is converted on
// the way out by the store of the cluster's CRD exactly as a read from
// etcd decodes it (coerced and pruned by the schema of the stored
// version, defaulted, converted into the served version; the codec's
// FromStored), so a cluster never sees another cluster's schema applied.
// Watchers are indexed by cluster: an event costs the watchers of its own
// cluster (and those across all clusters). What the cache cannot answer
// goes to etcd as before: gets without a resourceVersion, field selectors
// on a CRD's selectable fields (they differ between clusters), lists
// upstream's CacheDelegator would delegate, and requests while the cache
// is not ready. A cache starts with the first list or watch of its
// group/resource in a logical cluster (which waits up to 5 s for its
// initial list) and stops once no such request used it for
// DefaultWatchCacheIdle; Run sweeps, one goroutine for the shard. Requests
// across all clusters (the garbage collector's informers) use a running
// cache but neither start one nor keep it running: when it stops, their
// watches end and resume from etcd at their last resourceVersion. No cache runs for a group/resource nobody
// lists or watches, and nothing is started per cluster or per CRD.
package customresources
