package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/logicalcluster/paths"
	apibindingadmission "github.com/tessera-dev/tessera/shard/admission/apibinding"
	"github.com/tessera-dev/tessera/shard/admission/clusterannotation"
	"github.com/tessera-dev/tessera/shard/admission/crdconversion"
	"github.com/tessera-dev/tessera/shard/admission/namespacelifecycle"
	"github.com/tessera-dev/tessera/shard/admission/rbacescalation"
	"github.com/tessera-dev/tessera/shard/admission/resourcestate"
	"github.com/tessera-dev/tessera/shard/admission/workspace"
	authzbootstrap "github.com/tessera-dev/tessera/shard/authorization/bootstrap"
	"github.com/tessera-dev/tessera/shard/controllers/apibinding"
	"github.com/tessera-dev/tessera/shard/controllers/crd/naming"
	"github.com/tessera-dev/tessera/shard/customresources"
	"github.com/tessera-dev/tessera/shard/discovery"
	"github.com/tessera-dev/tessera/shard/etcd"
	"github.com/tessera-dev/tessera/shard/fairness"
	"github.com/tessera-dev/tessera/shard/filters"
	"github.com/tessera-dev/tessera/shard/storage"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
	syncervw "github.com/tessera-dev/tessera/virtual/syncer"
)

// Server is a shard, ready to run.
type Server struct {
	*CompletedConfig
	GenericAPIServer *genericapiserver.GenericAPIServer
	etcd             *etcd.Server
	etcdClient       *clientv3.Client

	// Informers are the shard's wildcard informers, shared by its controllers.
	Informers       *informers.SharedInformerFactory
	logicalClusters informers.Informer[*corev1alpha1.LogicalCluster]
	crds            informers.Informer[*apiextensionsv1.CustomResourceDefinition]
	// apiBindings and apiResourceSchemas serve bound resources (bindings.go).
	apiBindings     informers.Informer[*apisv1alpha1.APIBinding]
	boundCRDs       *boundCRDs
	kcpClients      *clusters.KCPClusterClientset
	dynamicClients  *clusters.DynamicClusterClient
	customResources *customresources.Handler
	sharedEtcd      *customresources.SharedEtcd
	discovery       *discovery.Handler
	// virtual serves the in-process virtual workspaces under /services/.
	virtual http.Handler
	// apiExportVirtual is the in-process apiexport virtual workspace.
	apiExportVirtual http.Handler
	// syncerVirtual is the in-process syncer virtual workspace.
	syncerVirtual http.Handler
	controllers   []runner
	// embeddedCache is the in-process cache server, nil with an external
	// one.
	embeddedCache *cacheserver.Embedded
	// onCRDChange are called with the cluster of any CRD that changed.
	onCRDChange []func(logicalcluster.Name)
	// core are the identities of root's exports of kcp's own APIs, set
	// before the APIs are installed.
	core *coreIdentities
	// paths resolves workspace paths.
	paths paths.Resolver
	// builtinNames tells the names the built-in APIs of a group use; set by
	// installAPIs.
	builtinNames naming.BuiltinNames
}

// New starts the embedded etcd (unless an external one is configured) and
// builds the API server with every built-in API installed.
func (c CompletedConfig) New(ctx context.Context) (*Server, error) {
	logger := klog.FromContext(ctx)
	s := &Server{CompletedConfig: &c}
	o := c.Options
	if len(o.EtcdServers) == 0 {
		e, err := etcd.Start(ctx, etcd.Options{
			Dir:           o.RootDirectory + "/etcd-server",
			ClientPort:    o.EmbeddedEtcdClientPort,
			PeerPort:      o.EmbeddedEtcdPeerPort,
			UnsafeNoFsync: o.EmbeddedEtcdUnsafeNoFsync,
			LogLevel:      o.EmbeddedEtcdLogLevel,
		})
		if err != nil {
			return nil, err
		}
		s.etcd = e
		c.Storage.Backend.Transport.ServerList = []string{e.ClientURL}
		logger.Info("Embedded etcd is up", "url", e.ClientURL, "dir", o.RootDirectory+"/etcd-server")
	}

	if err := s.build(ctx); err != nil {
		s.closeEtcd()
		return nil, err
	}
	return s, nil
}

// build assembles the server on a running etcd.
func (s *Server) build(ctx context.Context) error {
	c := s.CompletedConfig
	etcdClient, err := newEtcdClient(c.Storage.Backend.Transport)
	if err != nil {
		return err
	}
	s.etcdClient = etcdClient

	gc := c.Generic
	gc.AddReadyzChecks(etcdCheck{etcdClient})
	s.Informers = c.informers
	s.logicalClusters = s.Informers.LogicalClusters()
	if err := s.logicalClusters.Informer().AddIndexers(cache.Indexers{paths.ByPath: paths.LogicalClusterIndex}); err != nil {
		return err
	}
	s.paths = s.newPathResolver()
	if s.kcpClients, err = clusters.NewKCPForConfig(gc.LoopbackClientConfig); err != nil {
		return err
	}
	if s.dynamicClients, err = clusters.NewDynamicForConfig(gc.LoopbackClientConfig); err != nil {
		return err
	}

	s.crds = s.Informers.CustomResourceDefinitions()
	if err := s.crds.Informer().AddIndexers(cache.Indexers{byCRDName: crdNameIndex}); err != nil {
		return err
	}
	s.apiBindings = s.Informers.APIBindings()
	if err := s.apiBindings.Informer().AddIndexers(cache.Indexers{
		apibinding.ByBoundResource: apibinding.BoundResourceIndex,
		apibinding.ByExport:        apibinding.ExportIndex,
		apibinding.ByIdentity:      apibinding.IdentityIndex,
	}); err != nil {
		return err
	}
	if err := s.setupCache(); err != nil {
		return err
	}
	if err := s.apiExports.Informer().AddIndexers(cache.Indexers{apibinding.ByExportIdentity: apibinding.ExportIdentityIndex}); err != nil {
		return err
	}
	s.boundCRDs = newBoundCRDs()
	lifecycle, err := namespacelifecycle.NewForConfig(gc.LoopbackClientConfig, s.Informers)
	if err != nil {
		return err
	}
	if err := lifecycle.ValidateInitialization(); err != nil {
		return err
	}
	escalation, err := rbacescalation.NewForAuthorizer(c.authz, gc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	wsAdmission := workspace.New(workspace.NewConfig(s.logicalClusters, s.workspaceTypes, s.resolvePath, c.authz.Policy()))
	if err := wsAdmission.ValidateInitialization(); err != nil {
		return err
	}
	bindAdmission := apibindingadmission.New(apibindingadmission.Config{
		ResolvePath: s.resolvePath,
		Authorizer:  c.authz.Policy(),
		ExportExists: func(cluster logicalcluster.Name, name string) bool {
			_, err := s.apiExports.Lister().Cluster(cluster).Get(name)
			return err == nil
		},
		BoundBy: s.boundBy,
	})
	if err := bindAdmission.ValidateInitialization(); err != nil {
		return err
	}
	hooks, err := s.webhookPlugins()
	if err != nil {
		return err
	}
	quota, err := s.quotaPlugin()
	if err != nil {
		return err
	}
	limit, err := s.objectLimitPlugin()
	if err != nil {
		return err
	}
	chain, err := admissionChain(append(append([]namedPlugin{
		{namespacelifecycle.PluginName, lifecycle},
		{crdconversion.PluginName, crdconversion.New()},
		{rbacescalation.PluginName, escalation},
		{workspace.PluginName, wsAdmission},
		{apibindingadmission.PluginName, bindAdmission},
	}, hooks...), namedPlugin{clusterannotation.PluginName, clusterannotation.New()},
		namedPlugin{resourcestate.PluginName, resourcestate.New(s.Informers.Namespaces(), s.Informers.APIBindings())}, quota, limit)...)
	if err != nil {
		return err
	}
	gc.AdmissionControl = chain

	shared, err := customresources.NewSharedEtcd(ctx, c.Storage.Backend.Transport)
	if err != nil {
		return err
	}
	s.sharedEtcd = shared
	crDecorator := shared.Decorator(storage.ClusterAware)
	if c.Storage.Cached {
		// One watch cache per custom-resource group/resource, shared by
		// every logical cluster.
		crDecorator = shared.CachingDecorator()
	}
	crHandler, err := customresources.New(customresources.Config{
		CRDs:            s.crdFor,
		CRDsNamed:       s.crdsNamed,
		BoundCRDs:       s.identityCRDs,
		BoundIdentities: s.boundIdentities,
		RESTOptionsGetter: &customresources.RESTOptionsGetter{
			Backend:      c.Storage.Backend,
			Transformers: c.Storage.Transformers,
			Decorator:    crDecorator,
		},
		Authorizer:          gc.Authorization.Authorizer,
		Admission:           gc.AdmissionControl,
		MaxRequestBodyBytes: gc.MaxRequestBodyBytes,
		MinRequestTimeout:   time.Duration(gc.MinRequestTimeout) * time.Second,
	})
	if err != nil {
		return err
	}
	s.customResources = crHandler
	s.onCRDChange = append(s.onCRDChange, func(cluster logicalcluster.Name) {
		if s.discovery != nil {
			s.discovery.Invalidate(cluster)
		}
	})
	if _, err := s.crds.Informer().AddEventHandler(s.crdEvents()); err != nil {
		return err
	}
	if _, err := s.apiBindings.Informer().AddEventHandler(s.bindingEvents()); err != nil {
		return err
	}
	if _, err := s.apiResourceSchemas.Informer().AddEventHandler(s.schemaEvents()); err != nil {
		return err
	}

	// Without in-process virtual workspaces their paths are not served
	// here (404): tessera-virtual-workspaces serves them at the Shard's
	// virtualWorkspaceURL.
	if c.Options.RunVirtualWorkspaces {
		vw, err := initializingworkspaces.New(initializingworkspaces.Config{
			Loopback:   gc.LoopbackClientConfig,
			Authorizer: gc.Authorization.Authorizer,
			LogicalCluster: func(n logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
				return s.logicalClusters.Lister().Cluster(n).Get(corev1alpha1.LogicalClusterName)
			},
			MaxRequestBodyBytes: gc.MaxRequestBodyBytes,
		})
		if err != nil {
			return err
		}
		s.virtual = vw
		s.apiExportVirtual, err = apiexportvw.New(apiexportvw.Config{
			Shard:       gc.LoopbackClientConfig,
			Exports:     s.apiExports,
			Schemas:     s.apiResourceSchemas,
			Bindings:    s.apiBindings,
			ResolvePath: s.resolvePath,
			Authorizer:  c.authz.Policy(),
		})
		if err != nil {
			return err
		}
		s.syncerVirtual, err = syncervw.New(syncervw.Config{Shard: gc.LoopbackClientConfig, Authorizer: c.authz.Policy(), Remote: s.remoteCluster})
		if err != nil {
			return err
		}
	}

	gc.BuildHandlerChainFunc = func(apiHandler http.Handler, gcfg *genericapiserver.Config) http.Handler {
		s.discovery = discovery.Wrap(apiHandler, discovery.Config{CRDs: s.crdsOf, Serializer: gcfg.Serializer})
		h := filters.WithResourceVersionValidation(s.discovery, c.Codecs)
		h = filters.WithNameValidation(h, c.Codecs)
		h = s.withCoreGate(h, c.Codecs)
		h = filters.WithClusterGuard(h, s.clusterState, c.Codecs)
		h = s.withVirtualWorkspaces(h)
		h = genericapiserver.DefaultBuildHandlerChain(h, gcfg)
		h = fairness.WithWatchShape(h)
		if gcfg.AuditBackend != nil && gcfg.AuditPolicyRuleEvaluator != nil {
			h = filters.WithAuditAnnotations(h, s.auditTarget)
		}
		h = filters.WithClusterResolver(h, c.Codecs, s.resolvePath)
		return s.withEmbeddedCache(s.withHome(h))
	}
	generic, err := gc.Complete().New("tessera-shard", genericapiserver.NewEmptyDelegateWithCustomHandler(crHandler))
	if err != nil {
		return err
	}
	s.GenericAPIServer = generic
	delegateUnroutable(generic.Handler.GoRestfulContainer, crHandler, gc.Serializer)
	if err := s.loadCoreIdentities(ctx); err != nil {
		return err
	}
	if err := s.installAPIs(); err != nil {
		return err
	}
	if err := s.newControllers(); err != nil {
		return err
	}
	generic.AddPostStartHookOrDie("tessera-start-informers", func(hc genericapiserver.PostStartHookContext) error {
		go s.customResources.Run(hc.Context)
		go s.sharedEtcd.Run(hc.Context)
		if s.embeddedCache != nil {
			go s.embeddedCache.RunUntil(hc.Context)
		}
		s.Informers.Start(hc.Context)
		// The cache's replicas are read when they are there: nothing
		// waits for them (a cache that is down delays only what is
		// looked up in it).
		s.global.Start(hc.Context)
		s.tokenSecrets.Start(hc.Context)
		s.runControllers(hc.Context)
		for _, f := range []*informers.SharedInformerFactory{s.Informers, s.tokenSecrets} {
			for gvr, ok := range f.WaitForCacheSync(hc.Context) {
				if !ok {
					return fmt.Errorf("informer for %s did not sync", gvr)
				}
			}
		}
		c.startGate.open()
		return nil
	})
	// A shard with a new data dir makes its service account signing key
	// while it starts; it is ready only with the key, and stops if the
	// key cannot be made or read.
	generic.AddPostStartHookOrDie("tessera-service-account-key", func(genericapiserver.PostStartHookContext) error {
		return c.authnConfig.WaitForSigningKey()
	})
	generic.AddPostStartHookOrDie("tessera-bootstrap-logical-clusters", func(hc genericapiserver.PostStartHookContext) error {
		if err := ensureLogicalClusters(hc.Context, hc.LoopbackClientConfig, s.bootstrapClusters()); err != nil {
			return err
		}
		// The loopback config addresses the shard base URL: system:admin.
		admin, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		if err := authzbootstrap.Ensure(hc.Context, admin); err != nil {
			return err
		}
		if err := s.bootstrapInstallation(hc.Context, hc.LoopbackClientConfig); err != nil {
			return err
		}
		go s.announceReady(hc.Context, hc.LoopbackClientConfig)
		return nil
	})
	return nil
}

func (s *Server) closeEtcd() {
	if s.sharedEtcd != nil {
		_ = s.sharedEtcd.Close()
	}
	if s.etcdClient != nil {
		_ = s.etcdClient.Close()
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
}

// groupStorage collects the storage of one API group, by version.
type groupStorage map[string]map[string]rest.Storage

func (g groupStorage) add(gv schema.GroupVersion, storage map[string]rest.Storage) {
	if g[gv.Version] == nil {
		g[gv.Version] = map[string]rest.Storage{}
	}
	for k, v := range storage {
		g[gv.Version][k] = v
	}
}

// Run serves until ctx is done, then shuts down and stops etcd.
func (s *Server) Run(ctx context.Context) error {
	defer s.closeEtcd()
	prepared := s.GenericAPIServer.PrepareRun()
	s.installOpenAPI()
	s.hideGatedAPIs()
	return prepared.RunWithContext(ctx)
}

// errorf wraps installation errors.
func errorf(what string, err error) error { return fmt.Errorf("installing %s: %w", what, err) }
