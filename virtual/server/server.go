package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/logicalcluster/paths"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/forward"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
	syncervw "github.com/tessera-dev/tessera/virtual/syncer"
)

// Server is a virtual workspaces server ready to run.
type Server struct {
	CompletedConfig
	GenericAPIServer *genericapiserver.GenericAPIServer

	// Informers are the wildcard informers of the shard.
	Informers       *informers.SharedInformerFactory
	logicalClusters informers.Informer[*corev1alpha1.LogicalCluster]
	workspaces      informers.Informer[*tenancyv1alpha1.Workspace]
	exports         informers.Informer[*apisv1alpha1.APIExport]
	schemas         informers.Informer[*apisv1alpha1.APIResourceSchema]
	bindings        informers.Informer[*apisv1alpha1.APIBinding]
	// replicas are the cache's informers, nil without a cache.
	replicas *replicas
	// synced is set once every informer has synced.
	synced atomic.Bool
}

// New builds the wildcard informers of the shard (not started: Run
// starts them), the virtual workspace handlers and the API server.
func (c CompletedConfig) New() (*Server, error) {
	s := &Server{CompletedConfig: c}
	clients, err := informers.NewClientsForConfig(c.Shard)
	if err != nil {
		return nil, err
	}
	s.Informers = informers.NewSharedInformerFactory(clients, 0, informers.WithTransform(informers.StripManagedFields))
	s.logicalClusters = s.Informers.LogicalClusters()
	if err := s.logicalClusters.Informer().AddIndexers(cache.Indexers{paths.ByPath: paths.LogicalClusterIndex}); err != nil {
		return nil, err
	}
	s.workspaces = s.Informers.Workspaces()
	s.exports = s.Informers.APIExports()
	s.schemas = s.Informers.APIResourceSchemas()
	s.bindings = s.Informers.APIBindings()
	if c.Cache != nil {
		if s.replicas, err = newReplicas(c.Cache, c.Shard, c.Options.ShardName); err != nil {
			return nil, err
		}
		r := s.replicas
		s.exports = informers.NewUnion(s.exports, r.exports, apisv1alpha1.Resource("apiexports"), r.ownReplica)
		s.schemas = informers.NewUnion(s.schemas, r.factory.APIResourceSchemas(), apisv1alpha1.Resource("apiresourceschemas"), r.ownReplica)
		c.Authorizer.RouteBy(func(cluster logicalcluster.Name) (rest.Interface, bool) {
			if _, err := s.logicalClusters.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName); err == nil {
				return nil, false
			}
			return r.authorizationClient(cluster)
		})
	}
	resolver := paths.Resolver{
		ByCanonicalPath: func(path string) ([]any, error) {
			return s.logicalClusters.Informer().GetIndexer().ByIndex(paths.ByPath, path)
		},
		Workspace: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.Workspace, error) {
			return s.workspaces.Lister().Cluster(cluster).Get(name)
		},
	}
	if s.replicas != nil {
		resolver.Elsewhere = s.replicas.clusterByPath
	}

	gc := c.Generic
	initializing, err := initializingworkspaces.New(initializingworkspaces.Config{
		Loopback:   c.Shard,
		Authorizer: c.Authorizer,
		LogicalCluster: func(n logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			return s.logicalClusters.Lister().Cluster(n).Get(corev1alpha1.LogicalClusterName)
		},
		MaxRequestBodyBytes: gc.MaxRequestBodyBytes,
	})
	if err != nil {
		return nil, err
	}
	apiExport, err := apiexportvw.New(apiexportvw.Config{
		Shard:       c.Shard,
		Exports:     s.exports,
		Schemas:     s.schemas,
		Bindings:    s.bindings,
		ResolvePath: resolver.Resolve,
		Authorizer:  c.Authorizer,
	})
	if err != nil {
		return nil, err
	}
	syncerConfig := syncervw.Config{Shard: c.Shard, Authorizer: c.Authorizer}
	if s.replicas != nil {
		// SyncTargets of other shards' workspaces are read and
		// authorized there.
		locator := s.replicas.locator(c.Shard)
		syncerConfig.Remote = func(ctx context.Context, cluster logicalcluster.Name) (*rest.Config, bool) {
			if _, err := s.logicalClusters.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName); err == nil {
				return nil, false
			}
			cfg, _, ok := locator.Find(ctx, cluster)
			return cfg, ok
		}
	}
	syncer, err := syncervw.New(syncerConfig)
	if err != nil {
		return nil, err
	}
	gc.AddReadyzChecks(healthz.NamedCheck("informers-synced", func(*http.Request) error {
		if !s.synced.Load() {
			return errors.New("the shard's informers have not synced yet")
		}
		return nil
	}))
	generic, err := gc.Complete(nil).New("tessera-virtual-workspaces", genericapiserver.NewEmptyDelegateWithCustomHandler(dispatch(s.synced.Load, initializing, apiExport, syncer)))
	if err != nil {
		return nil, err
	}
	s.GenericAPIServer = generic
	return s, nil
}

// dispatch sends requests to the virtual workspace whose prefix their
// path has; others get a NotFound Status. Until synced holds they get a
// ServiceUnavailable Status: an informer that has not synced would make
// exports and logical clusters look missing.
func dispatch(synced func() bool, initializing, apiExport, syncer http.Handler) http.Handler {
	scheme := runtime.NewScheme()
	statusVersion := schema.GroupVersion{Version: "v1"}
	metav1.AddToGroupVersion(scheme, statusVersion)
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		served := strings.HasPrefix(req.URL.Path, initializingworkspaces.PathPrefix) || strings.HasPrefix(req.URL.Path, apiexportvw.PathPrefix) ||
			syncervw.Handles(req.URL.Path)
		switch {
		case served && !synced():
			responsewriters.ErrorNegotiated(apierrors.NewServiceUnavailable("the virtual workspaces have not read the shard yet"), codecs, statusVersion, w, req)
		case strings.HasPrefix(req.URL.Path, initializingworkspaces.PathPrefix):
			initializing.ServeHTTP(w, req)
		case strings.HasPrefix(req.URL.Path, apiexportvw.PathPrefix):
			apiExport.ServeHTTP(w, req)
		case syncervw.Handles(req.URL.Path):
			syncer.ServeHTTP(w, req)
		default:
			responsewriters.ErrorNegotiated(forward.ErrPathNotFound(), codecs, statusVersion, w, req)
		}
	})
}

// PreparedServer is a Server whose API server is prepared to run.
type PreparedServer struct {
	*Server
	run func(context.Context) error
}

// PrepareRun installs the health checks and the rest of what serving
// needs; call it once.
func (s *Server) PrepareRun() PreparedServer {
	return PreparedServer{Server: s, run: s.GenericAPIServer.PrepareRun().RunWithContext}
}

// Run starts the informers and serves until ctx is done; /readyz fails
// until the informers have synced.
func (s PreparedServer) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithValues("shard", s.Options.ShardName)
	ctx = klog.NewContext(ctx, logger)
	s.Informers.Start(ctx)
	defer s.Informers.Shutdown()
	if s.replicas != nil {
		s.replicas.factory.Start(ctx)
		defer s.replicas.factory.Shutdown()
	}
	go func() {
		for gvr, ok := range s.Informers.WaitForCacheSync(ctx) {
			if !ok {
				logger.Info("An informer of the shard did not sync", "resource", gvr.String())
				return
			}
		}
		s.synced.Store(true)
		logger.Info("The shard's informers have synced")
	}()
	if err := s.run(ctx); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// Run is PrepareRun().Run(ctx).
func (s *Server) Run(ctx context.Context) error {
	return s.PrepareRun().Run(ctx)
}
