package clusters

import (
	"fmt"
	"net/http"

	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// ClusterClientset hands out kubernetes clientsets per logical cluster.
type ClusterClientset = Cache[kubernetes.Interface]

// DynamicClusterClient hands out dynamic clients per logical cluster.
type DynamicClusterClient = Cache[dynamic.Interface]

// APIExtensionsClusterClientset hands out apiextensions clientsets (CRDs) per
// logical cluster.
type APIExtensionsClusterClientset = Cache[apiextensionsclientset.Interface]

// NewForConfig returns a ClusterClientset for the shard at cfg.Host, with a
// new http.Client built from cfg.
func NewForConfig(cfg *rest.Config) (*ClusterClientset, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building http client for %s: %w", cfg.Host, err)
	}
	return NewForConfigAndClient(cfg, httpClient)
}

// NewForConfigAndClient returns a ClusterClientset whose clients share
// httpClient.
func NewForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*ClusterClientset, error) {
	return NewCache(cfg, httpClient, func(c *rest.Config, h *http.Client) (kubernetes.Interface, error) {
		return kubernetes.NewForConfigAndClient(c, h)
	}, 0)
}

// NewDynamicForConfig returns a DynamicClusterClient for the shard at
// cfg.Host, with a new http.Client built from cfg.
func NewDynamicForConfig(cfg *rest.Config) (*DynamicClusterClient, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building http client for %s: %w", cfg.Host, err)
	}
	return NewDynamicForConfigAndClient(cfg, httpClient)
}

// NewDynamicForConfigAndClient returns a DynamicClusterClient whose clients
// share httpClient.
func NewDynamicForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*DynamicClusterClient, error) {
	return NewCache(cfg, httpClient, func(c *rest.Config, h *http.Client) (dynamic.Interface, error) {
		return dynamic.NewForConfigAndClient(c, h)
	}, 0)
}

// NewAPIExtensionsForConfig returns an APIExtensionsClusterClientset for the
// shard at cfg.Host, with a new http.Client built from cfg.
func NewAPIExtensionsForConfig(cfg *rest.Config) (*APIExtensionsClusterClientset, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building http client for %s: %w", cfg.Host, err)
	}
	return NewAPIExtensionsForConfigAndClient(cfg, httpClient)
}

// NewAPIExtensionsForConfigAndClient returns an APIExtensionsClusterClientset
// whose clients share httpClient.
func NewAPIExtensionsForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*APIExtensionsClusterClientset, error) {
	return NewCache(cfg, httpClient, func(c *rest.Config, h *http.Client) (apiextensionsclientset.Interface, error) {
		return apiextensionsclientset.NewForConfigAndClient(c, h)
	}, 0)
}

// KCPClusterClientset hands out clients of the kcp API groups (core,
// tenancy, apis and topology.kcp.io) per logical cluster.
type KCPClusterClientset = Cache[*kcpclient.Clientset]

// NewKCPForConfig returns a KCPClusterClientset for the shard at cfg.Host,
// with a new http.Client built from cfg.
func NewKCPForConfig(cfg *rest.Config) (*KCPClusterClientset, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building http client for %s: %w", cfg.Host, err)
	}
	return NewKCPForConfigAndClient(cfg, httpClient)
}

// NewKCPForConfigAndClient returns a KCPClusterClientset whose clients share
// httpClient.
func NewKCPForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*KCPClusterClientset, error) {
	return NewCache(cfg, httpClient, kcpclient.NewForConfigAndClient, 0)
}
