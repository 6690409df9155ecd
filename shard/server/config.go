// Package server assembles a shard: embedded or external etcd, the generic
// API server with cluster-aware storage and handlers, and the shard's
// controllers.
package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/features"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/openapi"
	"github.com/tessera-dev/tessera/shard/authentication"
	"github.com/tessera-dev/tessera/shard/authentication/serviceaccount"
	"github.com/tessera-dev/tessera/shard/authorization"
	"github.com/tessera-dev/tessera/shard/authorization/maximalpermission"
	"github.com/tessera-dev/tessera/shard/authorization/rbac"
	"github.com/tessera-dev/tessera/shard/certs"
	"github.com/tessera-dev/tessera/shard/fairness"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/shard/storage"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
	"github.com/tessera-dev/tessera/virtual/initializingworkspaces"
	syncervw "github.com/tessera-dev/tessera/virtual/syncer"
)

// KubernetesVersion is the Kubernetes API version the shard serves.
const KubernetesVersion = "1.37.2"

// Config is everything a shard needs to start.
type Config struct {
	Options options.CompletedOptions
	Generic *genericapiserver.RecommendedConfig
	Scheme  *runtime.Scheme
	Codecs  serializer.CodecFactory
	Storage *storage.RESTOptionsGetter
	Certs   certs.Files
	// ServerURL is the base URL clients use.
	ServerURL string
	// EtcdPrefix is the key prefix of all objects in etcd.
	EtcdPrefix string

	rules authorizer.RuleResolver
	cacheState
	authz     *authorization.Authorizer
	informers *informers.SharedInformerFactory
	// authnConfig and authn are the shard's authentication; tokenSecrets
	// holds the informer of service account token Secrets it reads.
	authnConfig  *authentication.Config
	authn        *authentication.Authentication
	tokenSecrets *informers.SharedInformerFactory
	// startGate holds authorization until the informers have synced.
	startGate *startGate
}

type completedConfig struct {
	*Config
}

// CompletedConfig can only be made by Complete.
type CompletedConfig struct {
	*completedConfig
}

// NewConfig turns completed options into a configuration. It creates the
// certificates under the root directory when they are missing.
func NewConfig(o options.CompletedOptions) (*Config, error) {
	// A process-wide switch of k8s.io/apiserver, read when watch caches
	// are built.
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(features.ListFromCacheSnapshot): o.WatchCacheListSnapshots}); err != nil {
		return nil, err
	}
	scheme, codecs, err := NewScheme()
	if err != nil {
		return nil, err
	}
	files, err := certs.EnsureWith(filepath.Join(o.RootDirectory, "certs"), sets.List(sets.New(o.ExternalHostname, o.BindAddress, "127.0.0.1", "localhost")), certSources(o))
	if err != nil {
		return nil, err
	}

	gc := genericapiserver.NewRecommendedConfig(codecs)
	serving := genericoptions.NewSecureServingOptions()
	serving.BindAddress = net.ParseIP(o.BindAddress)
	serving.BindPort = o.SecurePort
	serving.ServerCert.CertKey = genericoptions.CertKey{CertFile: files.Serving.CertFile, KeyFile: files.Serving.KeyFile}
	if err := certs.ApplySecureServingWithLoopback(serving, &gc.SecureServing, &gc.LoopbackClientConfig); err != nil {
		return nil, fmt.Errorf("secure serving: %w", err)
	}
	gc.ExternalAddress = net.JoinHostPort(o.ExternalHostname, strconv.Itoa(o.SecurePort))

	authnConfig, err := authentication.NewConfig(o.Authentication, authentication.Files{CertsDir: filepath.Join(o.RootDirectory, "certs"), CAFile: files.CA.CertFile})
	if err != nil {
		return nil, err
	}
	if err := gc.Authentication.ApplyClientCert(authnConfig.ClientCA(), gc.SecureServing); err != nil {
		return nil, err
	}
	gc.Authentication.RequestHeaderConfig = authnConfig.RequestHeaderConfig()
	gc.Authentication.APIAudiences = authnConfig.APIAudiences()
	// The authorizer reads RBAC and LogicalClusters from the shard's
	// wildcard informers, which therefore exist before the server.
	informerClients, err := informers.NewClientsForConfig(clusters.WildcardConfig(gc.LoopbackClientConfig))
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(informerClients, 0, informers.WithTransform(informers.StripManagedFields))
	// Service account tokens read service accounts and token Secrets from
	// wildcard informers, and the API server on cache misses.
	tokenSecrets := authentication.NewTokenSecretInformers(informerClients, informers.WithTransform(informers.StripManagedFields))
	loopbackClients, err := clusters.NewForConfig(gc.LoopbackClientConfig)
	if err != nil {
		return nil, err
	}
	var cs cacheState
	if cs.cacheConfig, err = cacheConfigFor(o, gc.LoopbackClientConfig); err != nil {
		return nil, err
	}
	if err := cs.newGlobalInformers(o.ShardName, factory); err != nil {
		return nil, err
	}
	lcs := factory.LogicalClusters()
	// Logical clusters of other shards are found by asking them.
	cs.locator = newShardLocator(o.ShardName, cs.shards, files)
	authn, err := authnConfig.New(authentication.Deps{
		ServiceAccounts: factory.ServiceAccounts(),
		TokenSecrets:    tokenSecrets.Secrets(),
		Clients:         loopbackClients,
		Remote: serviceaccount.NewRemote(serviceaccount.RemoteConfig{
			Local: func(c logicalcluster.Name) bool {
				_, err := lcs.Lister().Cluster(c).Get(corev1alpha1.LogicalClusterName)
				return err == nil
			},
			ShardOf: func(ctx context.Context, c logicalcluster.Name) (*rest.Config, bool) {
				cfg, _, ok := cs.locator.Find(ctx, c)
				return cfg, ok
			},
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("authentication: %w", err)
	}
	// Cache audit (issue 9): of the upstream chain this config builds,
	// constrained impersonation caches decisions (cluster-keyed through
	// the scope authn.Request gives impersonators, see
	// authentication.scopeImpersonators); API Priority and Fairness keeps
	// flows keyed by <cluster>|<user> (package fairness) and caches no
	// decision; webhook authentication and webhook authorization, which
	// cache, are not wired. Audit (below) caches nothing: its policy
	// decides by user, verb, resource and namespace, the same in every
	// logical cluster, and its backends only write events.
	gc.Authentication.Authenticator = authn.Request
	var authz *authorization.Authorizer
	authz, err = authorization.NewForInformers(factory, func(c *authorization.Config) {
		// ClusterRoles and bindings of other shards' logical clusters
		// (those that authorize bind and use) come from the cache.
		if err := rbac.EnsureIndexers(cs.global.ClusterRoleBindings().Informer(), rbac.SubjectIndexers()); err == nil {
			if store, ok := c.Store.(*rbac.IndexerStore); ok {
				c.Store = store.WithClusterScoped(cs.clusterRoles.Informer().GetIndexer(), cs.clusterRoleBindings.Informer().GetIndexer())
			}
		}
		c.ContentAdmin = contentAdmin(lcs, func() authorizer.Authorizer { return authz })
		c.MaximalPermissionPolicy = maximalpermission.Wrap(boundExports(factory))
	})
	if err != nil {
		return nil, fmt.Errorf("authorizer: %w", err)
	}
	gate := newStartGate()
	gc.Authorization.Authorizer = gate.wrap(authz)
	gc.RuleResolver = authz
	// Every event names its logical cluster: see filters.WithAuditAnnotations.
	if err := o.Audit.ApplyTo(&gc.Config); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}

	gc.MaxRequestsInFlight, gc.MaxMutatingRequestsInFlight = o.MaxRequestsInFlight, o.MaxMutatingRequestsInFlight
	if gc.MaxRequestsInFlight == 0 {
		gc.MaxRequestsInFlight = 50 * goruntime.GOMAXPROCS(0)
	}
	if gc.MaxMutatingRequestsInFlight == 0 {
		gc.MaxMutatingRequestsInFlight = 25 * goruntime.GOMAXPROCS(0)
	}
	if o.EnablePriorityAndFairness {
		apf, err := fairness.New(gc.LoopbackClientConfig, gc.MaxRequestsInFlight+gc.MaxMutatingRequestsInFlight)
		if err != nil {
			return nil, err
		}
		gc.FlowControl = apf
	}

	gc.EffectiveVersion = effectiveVersion{compatibility.NewEffectiveVersionFromString(KubernetesVersion, "", "")}
	namer := openapinamer.NewDefinitionNamer(scheme)
	gc.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	gc.OpenAPIConfig.Info.Title = "Tessera"
	gc.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	gc.OpenAPIV3Config.Info.Title = "Tessera"
	// Server.installOpenAPI serves both, the v2 document built lazily.
	gc.SkipOpenAPIInstallation = true
	gc.EnableIndex = false
	gc.EnableProfiling = o.Profiling
	gc.EnableContentionProfiling = o.Profiling && o.ContentionProfiling
	gc.MinRequestTimeout = 1800
	// Watches through the in-process virtual workspaces are long-running,
	// though not resource requests of the shard's own API.
	// Watches end at shutdown (their clients, the front-proxy, other
	// shards and controllers, list and watch again) instead of holding the
	// process for the whole ShutdownTimeout: a rolling restart of a shard
	// takes seconds, not the 60 s the open watches would keep it.
	gc.ShutdownWatchTerminationGracePeriod = 2 * time.Second
	longRunning := gc.LongRunningFunc
	gc.LongRunningFunc = func(r *http.Request, ri *request.RequestInfo) bool {
		return initializingworkspaces.IsLongRunning(r) || apiexportvw.IsLongRunning(r) || syncervw.IsLongRunning(r) || longRunning(r, ri)
	}

	backend := storagebackend.NewDefaultConfig(strings.TrimSuffix(o.EtcdPrefix, "/"), nil)
	backend.CompactionInterval = 5 * time.Minute
	backend.Transport.ServerList = o.EtcdServers
	backend.Transport.TrustedCAFile = o.EtcdCAFile
	backend.Transport.CertFile = o.EtcdCertFile
	backend.Transport.KeyFile = o.EtcdKeyFile
	transformers, err := encryption(o.EncryptionProviderConfig, gc)
	if err != nil {
		return nil, err
	}
	restOptions := &storage.RESTOptionsGetter{
		Backend:         *backend,
		Scheme:          scheme,
		Codecs:          codecs,
		Cached:          o.WatchCache,
		StorageVersions: map[schema.GroupResource]schema.GroupVersion{},
		Transformers:    transformers,
	}
	gc.RESTOptionsGetter = restOptions

	return &Config{
		Options:      o,
		Generic:      gc,
		Scheme:       scheme,
		Codecs:       codecs,
		Storage:      restOptions,
		Certs:        files,
		ServerURL:    "https://" + gc.ExternalAddress,
		EtcdPrefix:   backend.Prefix,
		rules:        authz,
		authz:        authz,
		informers:    factory,
		cacheState:   cs,
		authnConfig:  authnConfig,
		authn:        authn,
		tokenSecrets: tokenSecrets,
		startGate:    gate,
	}, nil
}

// Complete fills in what can be derived.
func (c *Config) Complete() CompletedConfig {
	return CompletedConfig{&completedConfig{c}}
}
