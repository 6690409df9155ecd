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
//	type AnyCRDGetter func(group, resource string) (*apiextensionsv1.CustomResourceDefinition, error)
//	type Config struct {
//		CRDs                CRDGetter                        // required
//		AnyCRD              AnyCRDGetter                     // nil: wildcard CR requests get 404
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
// (genericapiserver.NewEmptyDelegateWithCustomHandler): it sees the requests
// for /apis/<group>/<version>/... that no built-in group serves, after
// authentication and authorization, with the RequestInfo and the logical
// cluster (logicalcluster.ClusterFrom) in the request context. Requests that
// no CRD serves (unknown resource, version not served, CRD without the
// Established=True condition, scope mismatch) go to Config.NotFound; an
// unknown subresource gets a NotFound Status. While a CRD is terminating,
// creates are Forbidden, as upstream. CRDs with webhook conversion are not
// served (a tenant's webhook would be called from inside the shard): their
// requests get an InternalError Status.
//
// Requests to /clusters/* (logicalcluster.Cluster.Wildcard) may only list
// and watch; they are served with the schema of the CRD that Config.AnyCRD
// returns, which should be a stable choice (the same CRD for the same
// group/resource as long as it exists), since a different CRD rebuilds the
// wildcard serving state.
//
// # Serving state
//
// What a CRD needs to be served (schemas, validators, CEL programs, field
// manager, stores per version) is built on the first request for a
// (cluster, CRD name) and cached in one LRU for the whole shard, bounded by
// MaxEntries. It is rebuilt when the CRD's UID or resourceVersion changes,
// and dropped by Invalidate (call it from a CRD informer on update and
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
// (cluster, CRD, version). No watch cache is put in front of custom
// resources: that would be a cache per cluster and CRD.
package customresources
