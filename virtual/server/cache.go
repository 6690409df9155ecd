package server

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/cacheserver/replicated"
	cacheserver "github.com/tessera-dev/tessera/cacheserver/server"
	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/logicalcluster/paths"
	"github.com/tessera-dev/tessera/pkg/shardlocator"
)

// With --cache-kubeconfig the process also reads the cache server's
// replicas of every shard's APIExports, APIResourceSchemas and Shards: an
// export of another shard is served to its consumers on this shard (the
// export and its schemas come from the cache, the consumers' objects from
// this shard), its path resolves through the replicas' kcp.io/path, and
// the question whether a provider may reach the export's content is asked
// of the export's shard, which holds its RBAC. The cache's informers are
// best effort: readiness waits for the shard's only.

// replicas are the cache's informers.
type replicas struct {
	factory *informers.SharedInformerFactory
	exports informers.Informer[*apisv1alpha1.APIExport]
	shards  informers.Informer[*corev1alpha1.Shard]
	// own is this shard's name: its replicas are hidden.
	own   string
	admin *rest.Config
	// clients are the authorization clients of other shards, by name.
	clients sync.Map
}

func newReplicas(cacheBase, admin *rest.Config, own string) (*replicas, error) {
	kcp, err := kcpclient.NewForConfig(cacheserver.ScopedConfig(cacheBase, "*", "*"))
	if err != nil {
		return nil, err
	}
	r := &replicas{factory: informers.NewSharedInformerFactory(informers.Clients{KCP: kcp}, 0, informers.WithTransform(informers.StripManagedFields)), own: own, admin: admin}
	r.exports = r.factory.APIExports()
	r.shards = r.factory.Shards()
	if err := r.exports.Informer().AddIndexers(cache.Indexers{paths.ByPath: paths.ReplicaIndex}); err != nil {
		return nil, err
	}
	return r, nil
}

// ownReplica hides the replicas of this shard's objects.
func (r *replicas) ownReplica(obj any) bool {
	m, ok := obj.(metav1.Object)
	return !ok || m.GetAnnotations()[replicated.ShardAnnotationKey] == r.own
}

// clusterByPath finds the logical cluster of a path among other shards'
// export replicas.
func (r *replicas) clusterByPath(path string) (logicalcluster.Name, bool) {
	objs, err := r.exports.Informer().GetIndexer().ByIndex(paths.ByPath, path)
	if err != nil {
		return "", false
	}
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok && !r.ownReplica(o) {
			return logicalcluster.From(m), true
		}
	}
	return "", false
}

// shardOf names the shard of a logical cluster of another shard that has
// exports, "" if unknown.
func (r *replicas) shardOf(cluster logicalcluster.Name) string {
	objs, err := r.exports.Informer().GetIndexer().ByIndex(informers.ClusterIndex, cluster.String())
	if err != nil || len(objs) == 0 {
		return ""
	}
	if m, ok := objs[0].(metav1.Object); ok && !r.ownReplica(objs[0]) {
		return m.GetAnnotations()[replicated.ShardAnnotationKey]
	}
	return ""
}

// authorizationClient returns the client of the shard holding cluster,
// when that is another shard the replicas know.
func (r *replicas) authorizationClient(cluster logicalcluster.Name) (rest.Interface, bool) {
	shard := r.shardOf(cluster)
	if shard == "" {
		return nil, false
	}
	sh, err := r.shards.Lister().Cluster(logicalcluster.Root).Get(shard)
	if err != nil || sh.Spec.BaseURL == "" {
		return nil, false
	}
	key := shard + "|" + sh.Spec.BaseURL
	if c, ok := r.clients.Load(key); ok {
		return c.(rest.Interface), true
	}
	cfg := rest.CopyConfig(r.admin)
	cfg.Host = sh.Spec.BaseURL
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, false
	}
	c, _ := r.clients.LoadOrStore(key, client.AuthorizationV1().RESTClient())
	return c.(rest.Interface), true
}

// locator finds the shard of a logical cluster among the other shards the
// replicas name, asking them as admin does.
func (r *replicas) locator(admin *rest.Config) *shardlocator.Locator {
	return shardlocator.New(shardlocator.Config{
		Shards: shardlocator.OtherShards(r.shards, r.own),
		Admin:  admin,
	})
}
