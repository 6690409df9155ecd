package informers

import (
	"fmt"

	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
)

// NewClientsForConfig returns the wildcard Clients of the shard at cfg.Host
// (a trailing /clusters/<name> is ignored), sharing one new http.Client.
func NewClientsForConfig(cfg *rest.Config) (Clients, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return Clients{}, fmt.Errorf("building http client for %s: %w", cfg.Host, err)
	}
	wildcard := clusters.WildcardConfig(cfg)
	kube, err := kubernetes.NewForConfigAndClient(wildcard, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("building wildcard kubernetes client: %w", err)
	}
	apiExtensions, err := apiextensionsclientset.NewForConfigAndClient(wildcard, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("building wildcard apiextensions client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(wildcard, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("building wildcard dynamic client: %w", err)
	}
	kcp, err := kcpclient.NewForConfigAndClient(wildcard, httpClient)
	if err != nil {
		return Clients{}, fmt.Errorf("building wildcard kcp client: %w", err)
	}
	return Clients{Kubernetes: kube, APIExtensions: apiExtensions, Dynamic: dyn, KCP: kcp}, nil
}
