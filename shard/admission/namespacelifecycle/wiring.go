package namespacelifecycle

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// userAgent names the plugin's live lookups in the API server's logs.
const userAgent = "tessera-admission-namespacelifecycle"

// NewForConfig returns the plugin for a shard: it reads namespaces and
// LogicalClusters from f's wildcard informers and looks namespaces up live
// through per-cluster clients derived from loopback, the shard's admin
// config for its base URL. f must be started after this call.
func NewForConfig(loopback *rest.Config, f *informers.SharedInformerFactory) (*Plugin, error) {
	cfg := rest.CopyConfig(loopback)
	rest.AddUserAgent(cfg, userAgent)
	clients, err := clusters.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building %s admission clients: %w", PluginName, err)
	}
	namespaces := f.Namespaces()
	logicalClusters := f.LogicalClusters()
	return New(NewDependencies(namespaces, logicalClusters, clients)), nil
}

// NewDependencies returns the plugin's dependencies over a wildcard
// namespace informer, a wildcard LogicalCluster informer and
// per-cluster clients.
func NewDependencies(namespaces informers.Informer[*corev1.Namespace], logicalClusters informers.Informer[*corev1alpha1.LogicalCluster], clients *clusters.ClusterClientset) Dependencies {
	return Dependencies{
		GetNamespace: func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
			return namespaces.Lister().Cluster(cluster).Get(name)
		},
		GetLiveNamespace: func(ctx context.Context, cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
			client, err := clients.For(cluster)
			if err != nil {
				return nil, err
			}
			return client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		},
		ClusterDeleting: func(cluster logicalcluster.Name) (bool, error) {
			lc, err := logicalClusters.Lister().Cluster(cluster).Get(corev1alpha1.LogicalClusterName)
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return lc.DeletionTimestamp != nil, nil
		},
		Ready: func() bool {
			return namespaces.Informer().HasSynced() && logicalClusters.Informer().HasSynced()
		},
	}
}
