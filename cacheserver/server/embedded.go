package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/tessera-dev/tessera/shard/filters"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/compatibility"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
)

// EmbeddedConfig configures a cache server served by another server's
// listener, as `tessera start` does for a single-shard installation: the
// host mounts Embedded.Handler at PathPrefix+"/" in front of its own
// handler chain, and the cache keeps its replicas in the host's etcd under
// replicated.StoragePrefix.
type EmbeddedConfig struct {
	// Etcd is the host's etcd transport.
	Etcd storagebackend.TransportConfig
	// Authenticator authenticates requests (the host's own); only members
	// of system:masters are allowed in.
	Authenticator authenticator.Request
	// Loopback is a configuration of the host for the generic API
	// server's loopback needs.
	Loopback *rest.Config
	// WatchCache puts one watch cache per replicated resource in front of
	// etcd.
	WatchCache bool
	// MinRequestTimeout bounds watches as kube-apiserver's flag does
	// (default 1800 s).
	MinRequestTimeout time.Duration
}

// Embedded is a cache server without a listener of its own.
type Embedded struct {
	// Handler serves requests under PathPrefix, with its own filter chain
	// (authentication, authorization, request info).
	Handler http.Handler
	stores  []*replicated.REST
}

// NewEmbedded builds the cache server's storage and handler chain on the
// host's etcd. Stop releases the storage.
func NewEmbedded(c EmbeddedConfig) (*Embedded, error) {
	if c.Authenticator == nil || c.Loopback == nil {
		return nil, errors.New("embedded cache server: Authenticator and Loopback are required")
	}
	codecs := replicated.NewCodecs(replicated.Resources())
	gc := genericapiserver.NewConfig(serializer.NewCodecFactory(codecs.Scheme()))
	gc.LoopbackClientConfig = rest.CopyConfig(c.Loopback)
	if u, err := url.Parse(c.Loopback.Host); err == nil && u.Host != "" {
		gc.ExternalAddress = u.Host
	} else {
		gc.ExternalAddress = "127.0.0.1:443" // only used in discovery, which is off
	}
	gc.Authentication.Authenticator = withAuthenticatedGroup(c.Authenticator)
	gc.Authorization.Authorizer = mastersOnly()
	gc.EnableDiscovery = false
	gc.EnableIndex = false
	gc.EnableProfiling = false
	gc.EffectiveVersion = compatibility.NewEffectiveVersionFromString(KubernetesVersion, "", "")
	if c.MinRequestTimeout > 0 {
		gc.MinRequestTimeout = int(c.MinRequestTimeout / time.Second)
	}
	gc.BuildHandlerChainFunc = func(h http.Handler, gcfg *genericapiserver.Config) http.Handler {
		return withScope(genericapiserver.DefaultBuildHandlerChain(filters.WithResourceVersionValidation(h, gcfg.Serializer), gcfg))
	}
	backend := storagebackend.NewDefaultConfig(replicated.StoragePrefix, nil)
	backend.CompactionInterval = 0 // the host compacts its etcd
	backend.Transport = c.Etcd

	api, stores, err := newAPIHandler(codecs, *backend, c.WatchCache, time.Duration(gc.MinRequestTimeout)*time.Second)
	if err != nil {
		return nil, err
	}
	e := &Embedded{stores: stores}
	generic, err := gc.Complete(nil).New("tessera-cache-server", genericapiserver.NewEmptyDelegateWithCustomHandler(api))
	if err != nil {
		e.Stop()
		return nil, fmt.Errorf("embedded cache server: %w", err)
	}
	e.Handler = generic.Handler
	return e, nil
}

// Stop releases the storage (watch caches and etcd clients).
func (e *Embedded) Stop() {
	for _, s := range e.stores {
		s.Destroy()
	}
	e.stores = nil
}

// RunUntil stops the storage when ctx is done.
func (e *Embedded) RunUntil(ctx context.Context) {
	<-ctx.Done()
	e.Stop()
}
