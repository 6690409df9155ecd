package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/controllers/logicalclusterdeletion"
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
	if err := s.deleteChildWorkspaces(ctx, cluster); err != nil {
		return err
	}
	crdPrefix := root + storage.ResourcePrefix(apiextensionsv1.Resource("customresourcedefinitions")) + "/" + string(cluster) + "/"
	crds, err := s.etcdClient.Get(ctx, crdPrefix, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("listing CRDs of %s: %w", cluster, err)
	}
	var prefixes []string
	seen := map[string]bool{}
	for _, kv := range crds.Kvs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeStored(ctx, s, kv.Key, kv.Value, crd); err != nil {
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
		deleted, err := s.deletePrefixes(ctx, prefixes)
		if err != nil {
			return err
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

// txnOps is the number of range deletes sent in one etcd transaction
// (etcd refuses more than 128 operations per transaction by default).
const txnOps = 100

// deletePrefixes range-deletes every prefix, in as few etcd transactions
// as the operation limit allows, in order, and returns how many keys went.
func (s *Server) deletePrefixes(ctx context.Context, prefixes []string) (int64, error) {
	var deleted int64
	for start := 0; start < len(prefixes); start += txnOps {
		chunk := prefixes[start:min(start+txnOps, len(prefixes))]
		ops := make([]clientv3.Op, 0, len(chunk))
		for _, p := range chunk {
			ops = append(ops, clientv3.OpDelete(p, clientv3.WithPrefix()))
		}
		resp, err := s.etcdClient.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return deleted, fmt.Errorf("deleting %d key ranges from %s: %w", len(chunk), chunk[0], err)
		}
		for _, r := range resp.Responses {
			if d := r.GetResponseDeleteRange(); d != nil {
				deleted += d.Deleted
			}
		}
	}
	return deleted, nil
}

// childWorkspaceWait is how long a deleting logical cluster waits for its
// child workspaces before it looks again (the deletion of a child also
// wakes it).
const childWorkspaceWait = 500 * time.Millisecond

// deleteChildWorkspaces deletes the Workspaces of a deleting logical
// cluster through the API, so that each one deletes its own logical cluster
// (on whatever shard) before its finalizer lets it go. It returns a
// WaitError while any is left: the range deletes of the cluster's content
// must not remove a Workspace whose logical cluster still exists. It reads
// etcd, not the informer, so that a Workspace created just before the
// deletion started is not missed.
func (s *Server) deleteChildWorkspaces(ctx context.Context, cluster logicalcluster.Name) error {
	prefix := strings.TrimSuffix(s.EtcdPrefix, "/") + storage.ResourcePrefix(tenancyv1alpha1.Resource("workspaces")) + "/" + string(cluster) + "/"
	resp, err := s.etcdClient.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return fmt.Errorf("listing the child workspaces of %s: %w", cluster, err)
	}
	if len(resp.Kvs) == 0 {
		return nil
	}
	client, err := s.kcpClients.For(cluster)
	if err != nil {
		return err
	}
	waiting := 0
	for _, kv := range resp.Kvs {
		name := strings.TrimPrefix(string(kv.Key), prefix)
		ws, err := s.Informers.Workspaces().Lister().Cluster(cluster).Get(name)
		if err == nil && ws.DeletionTimestamp != nil {
			// Only a Workspace whose logical cluster still exists holds up
			// its parent; one the system has released (or never
			// scheduled) goes with the parent's range deletes, whatever
			// other finalizers it carries.
			if slices.Contains(ws.Finalizers, corev1alpha1.LogicalClusterFinalizer) {
				waiting++
			}
			continue
		}
		waiting++
		if err := client.Workspaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting child workspace %s of %s: %w", name, cluster, err)
		}
	}
	if waiting == 0 {
		return nil
	}
	return &logicalclusterdeletion.WaitError{After: childWorkspaceWait, Reason: fmt.Sprintf("%d child workspaces are being deleted", waiting)}
}

// maxDeletionPasses bounds the passes of DeleteClusterData; the caller
// retries with backoff.
const maxDeletionPasses = 10

// CustomResourcePrefix is the etcd prefix of the custom resources of a
// cluster-local CRD, below the storage prefix; the cluster follows it.
func CustomResourcePrefix(group, resource string) string {
	return "/" + group + "/" + resource + "/customresources"
}

// decodeStored decodes a CRD as stored in etcd under key (protobuf or JSON,
// encrypted if --encryption-provider-config says so).
func decodeStored(ctx context.Context, s *Server, key, data []byte, into *apiextensionsv1.CustomResourceDefinition) error {
	plain, _, err := s.Storage.Transformer(apiextensionsv1.Resource("customresourcedefinitions")).TransformFromStorage(ctx, data, value.DefaultContext(key))
	if err != nil {
		return fmt.Errorf("decrypting: %w", err)
	}
	_, _, err = s.Codecs.UniversalDeserializer().Decode(plain, nil, into)
	return err
}
