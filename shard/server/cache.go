package server

import (
	"fmt"
	"net/http"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster/paths"
	"github.com/tessera-dev/tessera/pkg/shardlocator"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/shard/controllers/replication"
	"github.com/tessera-dev/tessera/shard/options"
)

// The cache server holds what every shard of an installation must see
// (package replication pushes this shard's part). Without
// --cache-kubeconfig the root shard serves one itself under /services/cache
// on its own port, in its own etcd (keys under /cache), for members of
// system:masters, and joining shards use it: a single shard is a complete
// installation, and a small one needs no cache server process.

// cacheState is the shard's cache server connection.
type cacheState struct {
	// cacheConfig reaches the cache server's base URL as system:masters.
	cacheConfig *rest.Config
	// global are informers of the replicas of every shard in the cache
	// (shards/*/clusters/*), read after the shard's own objects; started
	// with the shard's informers.
	global    *informers.SharedInformerFactory
	shardName string
	// The unions of the shard's informers and the cache's.
	apiResourceSchemas  informers.Informer[*apisv1alpha1.APIResourceSchema]
	apiExports          informers.Informer[*apisv1alpha1.APIExport]
	workspaceTypes      informers.Informer[*tenancyv1alpha1.WorkspaceType]
	clusterRoles        informers.Informer[*rbacv1.ClusterRole]
	clusterRoleBindings informers.Informer[*rbacv1.ClusterRoleBinding]
	// shards are root's Shards: local on the root shard, replicas
	// elsewhere.
	shards informers.Informer[*corev1alpha1.Shard]
	// replication pushes the shard's objects to the cache.
	replication *replication.Controller
	// locator finds the shard of a logical cluster of another shard.
	locator *shardlocator.Locator
}

// newShardLocator returns the locator of logical clusters on the other
// shards of root's Shards, asked with the shard's admin client
// certificate.
func newShardLocator(own string, shards informers.Informer[*corev1alpha1.Shard], files certs.Files) *shardlocator.Locator {
	return shardlocator.New(shardlocator.Config{
		Shards: shardlocator.OtherShards(shards, own),
		Admin: &rest.Config{TLSClientConfig: rest.TLSClientConfig{
			CAFile: files.CA.CertFile, CertFile: files.ShardClient.CertFile, KeyFile: files.ShardClient.KeyFile,
		}},
	})
}

// newGlobalInformers builds the informers of the cache's replicas, and
// the unions the shard reads.
func (s *cacheState) newGlobalInformers(shard string, local *informers.SharedInformerFactory) error {
	cfg := cacheserver.ScopedConfig(s.cacheConfig, "*", "*")
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("cache client: %w", err)
	}
	kube, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("cache client: %w", err)
	}
	kcp, err := kcpclient.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("cache client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return fmt.Errorf("cache client: %w", err)
	}
	s.global = informers.NewSharedInformerFactory(informers.Clients{Kubernetes: kube, KCP: kcp, Dynamic: dyn}, 0,
		informers.WithTransform(informers.StripManagedFields))
	for _, i := range []cache.SharedIndexInformer{s.global.APIExports().Informer(), s.global.WorkspaceTypes().Informer()} {
		if err := i.AddIndexers(cache.Indexers{paths.ByPath: paths.ReplicaIndex}); err != nil {
			return err
		}
	}
	s.shardName = shard
	// Exports, schemas, types and the RBAC of bind and use are looked up
	// on this shard, then among the replicas of the other shards.
	s.apiResourceSchemas = union(s, local.APIResourceSchemas(), s.global.APIResourceSchemas(), apisv1alpha1.Resource("apiresourceschemas"))
	s.apiExports = union(s, local.APIExports(), s.global.APIExports(), apisv1alpha1.Resource("apiexports"))
	s.workspaceTypes = union(s, local.WorkspaceTypes(), s.global.WorkspaceTypes(), tenancyv1alpha1.Resource("workspacetypes"))
	s.clusterRoles = union(s, local.ClusterRoles(), s.global.ClusterRoles(), rbacv1.Resource("clusterroles"))
	s.clusterRoleBindings = union(s, local.ClusterRoleBindings(), s.global.ClusterRoleBindings(), rbacv1.Resource("clusterrolebindings"))
	s.shards = union(s, local.Shards(), s.global.Shards(), corev1alpha1.Resource("shards"))
	return nil
}

// fromOtherShards hides the cache's replicas of this shard's own objects.
func (s *cacheState) fromOtherShards(obj any) bool {
	m, ok := obj.(metav1.Object)
	return !ok || m.GetAnnotations()[replicated.ShardAnnotationKey] == s.shardName
}

// union reads the shard's own objects, then those of other shards.
func union[T runtime.Object](s *cacheState, local, global informers.Informer[T], gr schema.GroupResource) informers.Informer[T] {
	return informers.NewUnion(local, global, gr, s.fromOtherShards)
}

// cacheConfigFor returns the configuration a shard reaches its cache
// server with: the external one's kubeconfig; else, on a joining shard,
// the root shard's embedded cache (through --root-shard-kubeconfig-file);
// else the shard's own, through its loopback.
func cacheConfigFor(o options.CompletedOptions, loopback *rest.Config) (*rest.Config, error) {
	kubeconfig := o.CacheKubeconfig
	if kubeconfig == "" && !o.IsRoot() {
		cfg, err := rootShardConfig(o.RootShardKubeconfigFile)
		if err != nil {
			return nil, err
		}
		return cacheserver.BaseConfig(cfg)
	}
	if kubeconfig == "" {
		return cacheserver.BaseConfig(loopback)
	}
	cfg, err := cacheserver.LoadConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--cache-kubeconfig: %w", err)
	}
	return cfg, nil
}

// setupCache builds the embedded cache server, unless an external one is
// configured.
func (s *Server) setupCache() error {
	c := s.CompletedConfig
	gc := c.Generic
	if c.Options.CacheKubeconfig != "" || !c.Options.IsRoot() {
		return nil
	}
	embedded, err := cacheserver.NewEmbedded(cacheserver.EmbeddedConfig{
		Etcd: c.Storage.Backend.Transport,
		// The shard's authenticator as completed (with its loopback
		// token), looked up per request.
		Authenticator: authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
			return gc.Authentication.Authenticator.AuthenticateRequest(req)
		}),
		Loopback:   gc.LoopbackClientConfig,
		WatchCache: c.Storage.Cached,
	})
	if err != nil {
		return err
	}
	s.embeddedCache = embedded
	return nil
}

// withEmbeddedCache sends requests under /services/cache/ to the embedded
// cache server, which authenticates and authorizes them itself.
func (s *Server) withEmbeddedCache(handler http.Handler) http.Handler {
	if s.embeddedCache == nil {
		return handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasPrefix(req.URL.Path, cacheserver.PathPrefix+"/") {
			s.embeddedCache.Handler.ServeHTTP(w, req)
			return
		}
		handler.ServeHTTP(w, req)
	})
}

// newReplication builds the controller that replicates the shard's
// objects to the cache.
func (s *Server) newReplication() error {
	r, err := replication.New(replication.Config{
		Shard:  s.Options.ShardName,
		Local:  s.Informers,
		Cache:  s.cacheConfig,
		PathOf: s.pathOf,
	})
	if err != nil {
		return fmt.Errorf("replication controller: %w", err)
	}
	s.replication = r
	s.controllers = append(s.controllers, r)
	return nil
}
