package server

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// BaseConfig returns a copy of cfg addressing the cache server's base URL:
// a path the kubeconfig carries (the "all" context of cache.kubeconfig, a
// shard's /clusters/<name>) is dropped. Clients add ScopeURL themselves.
func BaseConfig(cfg *rest.Config) (*rest.Config, error) {
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
	// A shard writes every change of what it replicates: client-go's
	// default 5 requests/s would hold each one up to 200ms behind the
	// previous ones.
	if out.QPS == 0 {
		out.QPS, out.Burst = 500, 1000
	}
	return out, nil
}

// ScopedConfig returns a copy of a base configuration (BaseConfig) for the
// replicas of shard and cluster ("*" for all).
func ScopedConfig(base *rest.Config, shard, cluster string) *rest.Config {
	out := rest.CopyConfig(base)
	out.Host += ScopeURL(shard, cluster)
	return out
}

// LoadConfig reads a --cache-kubeconfig: the cache server's kubeconfig, or
// a root shard's admin.kubeconfig (the root shard embeds a cache server),
// whose shard-base context (system:masters) is used when it has one; else
// the current context. The result is a BaseConfig.
func LoadConfig(kubeconfig string) (*rest.Config, error) {
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return nil, err
	}
	overrides := &clientcmd.ConfigOverrides{}
	if _, ok := raw.Contexts["shard-base"]; ok {
		overrides.CurrentContext = "shard-base"
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, overrides).ClientConfig()
	if err != nil {
		return nil, err
	}
	return BaseConfig(cfg)
}
