package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/storage"
)

// DeleteClusterData removes every object of a logical cluster from etcd by
// range deletes, resource by resource: first the custom resources of the
// cluster's CRDs, then every built-in resource. The cluster's LogicalCluster
// is left for last: its finalizer is removed by the caller.
func (s *Server) DeleteClusterData(ctx context.Context, cluster logicalcluster.Name) error {
	if !cluster.IsValid() {
		return fmt.Errorf("refusing to delete data of invalid logical cluster %q", cluster)
	}
	logger := klog.FromContext(ctx).WithValues("cluster", cluster)
	root := strings.TrimSuffix(s.EtcdPrefix, "/")
	crdPrefix := root + storage.ResourcePrefix(apiextensionsv1.Resource("customresourcedefinitions")) + "/" + string(cluster) + "/"
	crds, err := s.etcdClient.Get(ctx, crdPrefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("listing CRDs of %s: %w", cluster, err)
	}
	var prefixes []string
	seen := map[string]bool{}
	for _, kv := range crds.Kvs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeStored(s, kv.Value, crd); err != nil {
			logger.Error(err, "Skipping undecodable CRD while deleting cluster data", "key", string(kv.Key))
			continue
		}
		p := root + CustomResourcePrefix(crd.Spec.Group, crd.Spec.Names.Plural) + "/" + string(cluster) + "/"
		if !seen[p] {
			seen[p] = true
			prefixes = append(prefixes, p)
		}
	}
	// Namespaces go first: once they are gone, admission refuses new
	// namespaced objects, so controllers cannot recreate what follows.
	nsPrefix := storage.ResourcePrefix(schema.GroupResource{Resource: "namespaces"})
	prefixes = append([]string{root + nsPrefix + "/" + string(cluster) + "/"}, prefixes...)
	lcPrefix := storage.ResourcePrefix(corev1alpha1.Resource("logicalclusters"))
	for _, p := range s.Storage.ResourcePrefixes() {
		if p == lcPrefix || p == nsPrefix {
			continue
		}
		prefixes = append(prefixes, root+p+"/"+string(cluster)+"/")
	}
	// Writes that were admitted before the cluster started deleting may land
	// while we delete: pass again until a pass finds nothing.
	var total int64
	for pass := 1; ; pass++ {
		var deleted int64
		for _, p := range prefixes {
			resp, err := s.etcdClient.Delete(ctx, p, clientv3.WithPrefix())
			if err != nil {
				return fmt.Errorf("deleting %s: %w", p, err)
			}
			deleted += resp.Deleted
		}
		total += deleted
		if deleted == 0 {
			break
		}
		if pass == maxDeletionPasses {
			return fmt.Errorf("objects of logical cluster %s keep appearing after %d passes of deletion", cluster, pass)
		}
		time.Sleep(100 * time.Millisecond)
	}
	logger.V(2).Info("Deleted the data of a logical cluster", "keys", total, "prefixes", len(prefixes))
	return nil
}

// maxDeletionPasses bounds the passes of DeleteClusterData; the caller
// retries with backoff.
const maxDeletionPasses = 10

// CustomResourcePrefix is the etcd prefix of the custom resources of a
// cluster-local CRD, below the storage prefix; the cluster follows it.
func CustomResourcePrefix(group, resource string) string {
	return "/" + group + "/" + resource + "/customresources"
}

// decodeStored decodes a CRD as stored in etcd (protobuf or JSON).
func decodeStored(s *Server, data []byte, into *apiextensionsv1.CustomResourceDefinition) error {
	_, _, err := s.Codecs.UniversalDeserializer().Decode(data, nil, into)
	return err
}
