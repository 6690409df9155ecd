package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	"github.com/tessera-dev/tessera/shard/controllers/replication"
)

// The cache server holds what every shard of an installation must see
// (package replication pushes this shard's part). Without
// --cache-kubeconfig the shard serves one itself under /services/cache on
// its own port, in its own etcd (keys under /cache), for members of
// system:masters: a single shard is a complete installation, and other
// shards may use it as their cache.

// cacheState is the shard's cache server connection.
type cacheState struct {
	// embeddedCache is the in-process cache server, nil with an external
	// one.
	embeddedCache *cacheserver.Embedded
	// cacheConfig reaches the cache server's base URL as system:masters.
	cacheConfig *rest.Config
}

// setupCache builds the embedded cache server, unless an external one is
// configured, and the configuration the shard reaches its cache with.
func (s *Server) setupCache() error {
	c := s.CompletedConfig
	gc := c.Generic
	if kubeconfig := c.Options.CacheKubeconfig; kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return fmt.Errorf("--cache-kubeconfig: %w", err)
		}
		s.cacheConfig, err = cacheBase(cfg)
		return err
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
	s.cacheConfig, err = cacheBase(gc.LoopbackClientConfig)
	return err
}

// cacheBase returns cfg addressing the cache server's base URL: a path the
// kubeconfig carries (such as the "all" context of cache.kubeconfig, or a
// shard's /clusters/<name>) is dropped.
func cacheBase(cfg *rest.Config) (*rest.Config, error) {
	out := rest.CopyConfig(cfg)
	u, err := url.Parse(out.Host)
	if err != nil {
		return nil, fmt.Errorf("cache server URL %q: %w", out.Host, err)
	}
	if u.Scheme == "" {
		return nil, fmt.Errorf("cache server URL %q has no scheme", out.Host)
	}
	u.Path, u.RawPath, u.RawQuery = "", "", ""
	out.Host = strings.TrimRight(u.String(), "/")
	out.APIPath = ""
	return out, nil
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
	s.controllers = append(s.controllers, r)
	return nil
}
