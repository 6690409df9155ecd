package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/controllers/logicalclusterdeletion"
	"github.com/tessera-dev/tessera/shard/storage"
)

// DeleteClusterData removes every object of a logical cluster except its
// LogicalCluster, as namespace deletion does for a namespace: finalizers
// are honoured. It first deletes the cluster's child Workspaces through the
// API and waits for them. Then, pass after pass, it reads the whole content
// of the cluster at one etcd revision (re-listing the cluster's CRDs each
// time). While objects carry finalizers, it deletes those through the API
// (so they get a deletionTimestamp and their controllers do their cleanup)
// and waits, returning a WaitError that reports the finalizers; the rest of
// the content stays, so those controllers keep their CRDs, RBAC and
// service accounts. Once no finalizer is left, it range-deletes what the
// pass read, in bounded transactions that each go only if nothing in them
// changed since the read, and passes again until a pass finds nothing.
func (s *Server) DeleteClusterData(ctx context.Context, cluster logicalcluster.Name) error {
	if !cluster.IsValid() {
		return fmt.Errorf("refusing to delete data of invalid logical cluster %q", cluster)
	}
	logger := klog.FromContext(ctx).WithValues("cluster", cluster)
	if err := s.deleteChildWorkspaces(ctx, cluster); err != nil {
		return err
	}
	var total int64
	for pass := 1; ; pass++ {
		ranges, err := s.contentRanges(ctx, cluster)
		if err != nil {
			return err
		}
		var held []heldObject
		scan, err := storage.ScanContent(ctx, s.etcdClient, ranges, func(i int, key, data []byte) error {
			h, ok, err := s.decodeHeld(ctx, ranges[i].Resource, key, data)
			if err != nil {
				// Nothing can remove a finalizer from what cannot be
				// decoded: it goes with the range deletes.
				logger.Error(err, "Deleting an undecodable object with the content of a logical cluster", "key", string(key))
				return nil
			}
			if ok {
				held = append(held, h)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading the content of %s: %w", cluster, err)
		}
		if scan.Keys == 0 {
			logger.V(2).Info("Deleted the content of a logical cluster", "keys", total, "passes", pass)
			return nil
		}
		if len(held) > 0 {
			return s.deleteHeld(ctx, cluster, held)
		}
		deleted, complete, err := storage.DeleteScanned(ctx, s.etcdClient, scan)
		total += deleted
		if err != nil {
			return err
		}
		if pass == maxDeletionPasses {
			return fmt.Errorf("the content of logical cluster %s keeps changing after %d passes of deletion", cluster, pass)
		}
		if !complete {
			// Writes admitted before the cluster started deleting may
			// land meanwhile: read again.
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// contentRanges returns the key ranges of the content of a logical
// cluster: namespaces first, then the custom resources of every CRD the
// cluster has in etcd (found by the CRDs' keys, so a CRD that cannot be
// decoded, or one created during the deletion, leaves nothing behind), then
// every other stored resource but LogicalClusters. Values are read
// everywhere: objects with finalizers hold the deletion, also a Workspace
// that appeared after deleteChildWorkspaces looked (it is deleted through
// the API, so that its own logical cluster goes first).
func (s *Server) contentRanges(ctx context.Context, cluster logicalcluster.Name) ([]storage.ContentRange, error) {
	root := s.EtcdPrefix
	crdResource := apiextensionsv1.Resource("customresourcedefinitions")
	crdPrefix := storage.ClusterPrefix(root, s.Storage.PrefixOf(crdResource), cluster)
	crds, err := s.etcdClient.Get(ctx, crdPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, fmt.Errorf("listing CRDs of %s: %w", cluster, err)
	}
	nsResource := schema.GroupResource{Resource: "namespaces"}
	ranges := []storage.ContentRange{{Resource: nsResource, Prefix: storage.ClusterPrefix(root, s.Storage.PrefixOf(nsResource), cluster), Values: true}}
	seen := map[string]bool{}
	for _, kv := range crds.Kvs {
		name := strings.TrimPrefix(string(kv.Key), crdPrefix)
		gr, ok := storage.CustomResourceOfCRD(name)
		if !ok {
			klog.FromContext(ctx).Info("A CRD key does not name a resource, skipping its custom resources", "key", string(kv.Key))
			continue
		}
		p := storage.ClusterPrefix(root, storage.CustomResourcePrefix(gr), cluster)
		if !seen[p] {
			seen[p] = true
			ranges = append(ranges, storage.ContentRange{Resource: gr, Prefix: p, Values: true})
		}
	}
	// Resources bound through APIBindings, under their export's identity.
	// A binding holds the deletion with its finalizer until its controller
	// deleted these objects through the API; what is left goes here.
	if s.apiBindings.Informer() != nil {
		bindings, err := s.apiBindings.Lister().Cluster(cluster).List(labels.Everything())
		if err != nil {
			return nil, err
		}
		for _, b := range bindings {
			for _, r := range b.Status.BoundResources {
				gr := schema.GroupResource{Group: r.Group, Resource: r.Resource}
				p := storage.ClusterPrefix(root, storage.BoundResourcePrefix(gr, r.Schema.IdentityHash), cluster)
				if !seen[p] {
					seen[p] = true
					ranges = append(ranges, storage.ContentRange{Resource: gr, Prefix: p, Values: true})
				}
			}
		}
	}
	stored := s.Storage.StoredResources()
	prefixes := make([]string, 0, len(stored))
	for p := range stored {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		gr := stored[p]
		if gr == corev1alpha1.Resource("logicalclusters") || gr == nsResource {
			continue
		}
		ranges = append(ranges, storage.ContentRange{Resource: gr, Prefix: storage.ClusterPrefix(root, p, cluster), Values: true})
	}
	return ranges, nil
}

// heldObject is an object with finalizers in a deleting logical cluster.
type heldObject struct {
	resource   schema.GroupResource
	apiVersion string
	namespace  string
	name       string
	uid        types.UID
	finalizers []string
	deleting   bool
}

// storedMeta is the part of a stored JSON object deletion looks at.
type storedMeta struct {
	APIVersion string `json:"apiVersion"`
	Metadata   struct {
		Name              string       `json:"name"`
		Namespace         string       `json:"namespace"`
		UID               types.UID    `json:"uid"`
		Finalizers        []string     `json:"finalizers"`
		DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
	} `json:"metadata"`
}

// finalizersField is in every JSON object that has metadata.finalizers.
var finalizersField = []byte(`"finalizers"`)

// decodeHeld decodes the metadata of a stored object and tells whether it
// has finalizers.
func (s *Server) decodeHeld(ctx context.Context, resource schema.GroupResource, key, data []byte) (heldObject, bool, error) {
	plain, _, err := s.Storage.Transformer(resource).TransformFromStorage(ctx, data, value.DefaultContext(key))
	if err != nil {
		return heldObject{}, false, fmt.Errorf("decrypting: %w", err)
	}
	h := heldObject{resource: resource}
	if len(plain) > 0 && plain[0] == '{' {
		if !bytes.Contains(plain, finalizersField) {
			return heldObject{}, false, nil
		}
		var m storedMeta
		if err := json.Unmarshal(plain, &m); err != nil {
			return heldObject{}, false, err
		}
		h.apiVersion, h.namespace, h.name, h.uid = m.APIVersion, m.Metadata.Namespace, m.Metadata.Name, m.Metadata.UID
		h.finalizers, h.deleting = m.Metadata.Finalizers, m.Metadata.DeletionTimestamp != nil
	} else {
		obj, gvk, err := s.Codecs.UniversalDeserializer().Decode(plain, nil, nil)
		if err != nil {
			return heldObject{}, false, err
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return heldObject{}, false, err
		}
		h.apiVersion, h.namespace, h.name, h.uid = gvk.GroupVersion().String(), m.GetNamespace(), m.GetName(), m.GetUID()
		h.finalizers, h.deleting = m.GetFinalizers(), m.GetDeletionTimestamp() != nil
	}
	if resource == apisv1alpha1.Resource("apibindings") {
		// A binding's finalizer deletes its bound objects, which the
		// deletion of the cluster does anyway (those with finalizers through
		// the API, while the binding still serves them): it holds nothing
		// here.
		h.finalizers = slices.DeleteFunc(slices.Clone(h.finalizers), func(f string) bool { return f == apisv1alpha1.APIBindingFinalizer })
	}
	return h, len(h.finalizers) > 0, nil
}

// heldWait is how long a deleting logical cluster waits for finalizers
// before it looks again.
const heldWait = time.Second

// deleteHeld deletes the objects with finalizers that are not being
// deleted yet through the API, and returns a WaitError that reports what
// holds the deletion, as kube's namespace controller reports it.
func (s *Server) deleteHeld(ctx context.Context, cluster logicalcluster.Name, held []heldObject) error {
	client, err := s.dynamicClients.For(cluster)
	if err != nil {
		return err
	}
	byFinalizer := map[string]int{}
	for _, h := range held {
		for _, f := range h.finalizers {
			byFinalizer[f]++
		}
		if h.deleting {
			continue
		}
		gvr, err := s.servedVersion(cluster, h)
		if err != nil {
			return err
		}
		opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &h.uid}}
		err = client.Resource(gvr).Namespace(h.namespace).Delete(ctx, h.name, opts)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting %s %s/%s: %w", gvr.GroupResource(), h.namespace, h.name, err)
		}
	}
	remaining := make([]string, 0, len(byFinalizer))
	for f, n := range byFinalizer {
		remaining = append(remaining, fmt.Sprintf("%s in %d resource instances", f, n))
	}
	sort.Strings(remaining)
	msg := "Some content in the logical cluster has finalizers remaining: " + strings.Join(remaining, ", ")
	return &logicalclusterdeletion.WaitError{
		After:            heldWait,
		Reason:           msg,
		ConditionReason:  logicalclusterdeletion.FinalizersRemainReason,
		ConditionMessage: msg,
	}
}

// servedVersion returns a version the API serves a held object in: a
// served version of its CRD, or the version the built-in resource is
// stored in (the one the object was decoded in).
func (s *Server) servedVersion(cluster logicalcluster.Name, h heldObject) (schema.GroupVersionResource, error) {
	if crd, err := s.crds.Lister().Cluster(cluster).Get(h.resource.Resource + "." + h.resource.Group); err == nil {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				return h.resource.WithVersion(v.Name), nil
			}
		}
	}
	gv, err := schema.ParseGroupVersion(h.apiVersion)
	if err != nil || gv.Group != h.resource.Group {
		return schema.GroupVersionResource{}, fmt.Errorf("no served version of %s for %s/%s (stored as %q)", h.resource, h.namespace, h.name, h.apiVersion)
	}
	return h.resource.WithVersion(gv.Version), nil
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
	prefix := storage.ClusterPrefix(s.EtcdPrefix, s.Storage.PrefixOf(tenancyv1alpha1.Resource("workspaces")), cluster)
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
