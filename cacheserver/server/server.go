package server

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
	"github.com/tessera-dev/tessera/shard/etcd"
)

// Server is a cache server ready to run.
type Server struct {
	CompletedConfig
	GenericAPIServer *genericapiserver.GenericAPIServer

	etcd   *etcd.Server
	stores []*replicated.REST
	// stop ends the etcd health checks' clients.
	stop context.CancelFunc
}

// New starts the embedded etcd (unless an external one is configured),
// builds the storage of every replicated resource and the API server, and
// writes the admin kubeconfig when there is an admin certificate. ctx
// bounds the start only; Run serves.
func (c CompletedConfig) New(ctx context.Context) (*Server, error) {
	logger := klog.FromContext(ctx)
	s := &Server{CompletedConfig: c}
	o := c.Options
	if len(o.EtcdServers) == 0 {
		dir := filepath.Join(o.RootDirectory, "etcd-server")
		e, err := etcd.Start(ctx, etcd.Options{
			Dir:           dir,
			ClientPort:    o.EmbeddedEtcdClientPort,
			PeerPort:      o.EmbeddedEtcdPeerPort,
			UnsafeNoFsync: o.EmbeddedEtcdUnsafeNoFsync,
			LogLevel:      o.EmbeddedEtcdLogLevel,
		})
		if err != nil {
			return nil, err
		}
		s.etcd = e
		c.Backend.Transport.ServerList = []string{e.ClientURL}
		logger.Info("Embedded etcd is up", "url", e.ClientURL, "dir", dir)
	}
	if err := s.build(); err != nil {
		s.close()
		return nil, err
	}
	if c.Files.Admin.CertFile != "" {
		if _, err := c.WriteKubeconfig(); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) build() error {
	c := s.CompletedConfig
	gc := c.Generic
	stopCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	health, err := factory.CreateHealthCheck(*c.Backend, stopCtx.Done())
	if err != nil {
		return fmt.Errorf("etcd health check: %w", err)
	}
	ready, err := factory.CreateReadyCheck(*c.Backend, stopCtx.Done())
	if err != nil {
		return fmt.Errorf("etcd readiness check: %w", err)
	}
	gc.AddHealthChecks(healthz.NamedCheck("etcd", func(*http.Request) error { return health() }))
	gc.AddReadyzChecks(healthz.NamedCheck("etcd-readiness", func(*http.Request) error { return ready() }))

	api, stores, err := newAPIHandler(c.Codecs, *c.Backend, c.Options.WatchCache, time.Duration(gc.MinRequestTimeout)*time.Second)
	s.stores = stores
	if err != nil {
		return err
	}

	generic, err := gc.Complete(nil).New("tessera-cache-server", genericapiserver.NewEmptyDelegateWithCustomHandler(api))
	if err != nil {
		return err
	}
	s.GenericAPIServer = generic
	return nil
}

// newAPIHandler builds the storage of every replicated resource on backend
// and the handler serving them. The stores are returned also on error, to
// be destroyed.
func newAPIHandler(codecs *replicated.Codecs, backend storagebackend.Config, watchCache bool, minRequestTimeout time.Duration) (*apiHandler, []*replicated.REST, error) {
	api := &apiHandler{
		codecs:            codecs,
		resources:         replicated.Resources(),
		endpoints:         map[schema.GroupVersionResource]endpoint{},
		minRequestTimeout: minRequestTimeout,
	}
	restOptions := &replicated.RESTOptionsGetter{Backend: backend, WatchCache: watchCache}
	var stores []*replicated.REST
	for _, r := range api.resources {
		store, err := replicated.NewREST(r, restOptions)
		if err != nil {
			return nil, stores, err
		}
		stores = append(stores, store)
		api.endpoints[r.GroupVersionResource] = endpoint{store: store, scope: requestScope(codecs, r, store)}
	}
	return api, stores, nil
}

// requestScope is what the endpoint handlers need to serve r.
func requestScope(codecs *replicated.Codecs, r replicated.Resource, store *replicated.REST) *handlers.RequestScope {
	return &handlers.RequestScope{
		Namer:                    handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: true},
		Serializer:               codecs,
		ParameterCodec:           runtime.NewParameterCodec(codecs.Scheme()),
		Creater:                  codecs.Creater(),
		Convertor:                codecs.Converter(),
		Defaulter:                codecs.Scheme(),
		Typer:                    codecs.Typer(),
		UnsafeConvertor:          codecs.Converter(),
		Authorizer:               mastersOnly(),
		EquivalentResourceMapper: runtime.NewEquivalentResourceRegistry(),
		TableConvertor:           store.TableConvertor,
		Resource:                 r.GroupVersionResource,
		Kind:                     r.GroupVersionKind(),
		HubGroupVersion:          r.GroupVersion(),
		MetaGroupVersion:         metav1.SchemeGroupVersion,
		MaxRequestBodyBytes:      maxRequestBodyBytes,
	}
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

// Run serves until ctx is done, then stops the storage and the embedded
// etcd.
func (s PreparedServer) Run(ctx context.Context) error {
	defer s.close()
	return s.run(ctx)
}

// Run is PrepareRun().Run(ctx).
func (s *Server) Run(ctx context.Context) error {
	return s.PrepareRun().Run(ctx)
}

func (s *Server) close() {
	for _, store := range s.stores {
		store.Destroy()
	}
	s.stores = nil
	if s.stop != nil {
		s.stop()
	}
	if s.etcd != nil {
		s.etcd.Close()
		s.etcd = nil
	}
}
