package partitionset

import (
	"context"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "partitionset"

// Controller is the PartitionSet controller.
type Controller struct {
	*reconciler.Controller
}

// New wires the controller to the shard's informers of PartitionSets,
// Partitions and Shards (shards, if set, replaces f's); it writes
// Partitions and the status of sets with the kcp clients.
func New(kcp *clusters.KCPClusterClientset, f *informers.SharedInformerFactory, shardInformer *informers.Informer[*corev1alpha1.Shard]) (*Controller, error) {
	sets, partitions, shards := f.PartitionSets(), f.Partitions(), f.Shards()
	if shardInformer != nil {
		shards = *shardInformer
	}
	r := &setReconciler{
		getSet: func(cluster logicalcluster.Name, name string) (*topologyv1alpha1.PartitionSet, error) {
			return sets.Lister().Cluster(cluster).Get(name)
		},
		listShards: func(selector labels.Selector) ([]*corev1alpha1.Shard, error) {
			return shards.Lister().Cluster(logicalcluster.Root).List(selector)
		},
		listPartitions: func(ctx context.Context, cluster logicalcluster.Name) ([]*topologyv1alpha1.Partition, error) {
			client, err := kcp.For(cluster)
			if err != nil {
				return nil, err
			}
			list, err := client.Partitions().List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			out := make([]*topologyv1alpha1.Partition, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		},
		createPartition: func(ctx context.Context, cluster logicalcluster.Name, p *topologyv1alpha1.Partition) (*topologyv1alpha1.Partition, error) {
			client, err := kcp.For(cluster)
			if err != nil {
				return nil, err
			}
			return client.Partitions().Create(ctx, p, metav1.CreateOptions{})
		},
		updatePartition: func(ctx context.Context, cluster logicalcluster.Name, p *topologyv1alpha1.Partition) error {
			client, err := kcp.For(cluster)
			if err != nil {
				return err
			}
			_, err = client.Partitions().Update(ctx, p, metav1.UpdateOptions{})
			return err
		},
		deletePartition: func(ctx context.Context, cluster logicalcluster.Name, name string, uid types.UID) error {
			client, err := kcp.For(cluster)
			if err != nil {
				return err
			}
			return client.Partitions().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		},
		updateStatus: func(ctx context.Context, cluster logicalcluster.Name, set *topologyv1alpha1.PartitionSet) error {
			client, err := kcp.For(cluster)
			if err != nil {
				return err
			}
			_, err = client.PartitionSets().UpdateStatus(ctx, set, metav1.UpdateOptions{})
			return err
		},
	}
	c := &Controller{Controller: reconciler.New(ControllerName, reconciler.Func(r.reconcile), reconciler.Options{Workers: 2})}
	if err := c.Watch(sets.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	// A changed, new or deleted Partition brings its set back to its
	// groups (a Partition deleted by hand is created again).
	if err := c.Watch(partitions.Informer(), reconciler.EnqueueMappedHandler(c.Controller, ownerKeys)); err != nil {
		return nil, err
	}
	// Every set follows the Shards of root; only changes of their labels
	// change the groups.
	allSets := func() {
		list, err := sets.Lister().List(labels.Everything())
		if err != nil {
			return
		}
		for _, s := range list {
			c.Enqueue(reconciler.Key{Cluster: logicalcluster.From(s), Name: s.Name})
		}
	}
	if err := c.Watch(shards.Informer(), shardHandler(allSets)); err != nil {
		return nil, err
	}
	return c, nil
}

// ownerKeys returns the keys of the PartitionSets that own p, in p's
// logical cluster.
func ownerKeys(p *topologyv1alpha1.Partition) []reconciler.Key {
	var keys []reconciler.Key
	for _, o := range p.OwnerReferences {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err != nil || gv.Group != topologyv1alpha1.GroupName || o.Kind != "PartitionSet" {
			continue
		}
		keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(p), Name: o.Name})
	}
	return keys
}

// shardHandler calls enqueueAll when a Shard of root is added or deleted,
// or its labels change.
func shardHandler(enqueueAll func()) cache.ResourceEventHandler {
	inRoot := func(obj any) (*corev1alpha1.Shard, bool) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		s, ok := obj.(*corev1alpha1.Shard)
		return s, ok && logicalcluster.From(s) == logicalcluster.Root
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if _, ok := inRoot(obj); ok {
				enqueueAll()
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := inRoot(oldObj)
			n, okNew := inRoot(newObj)
			if okOld && okNew && maps.Equal(o.Labels, n.Labels) {
				return
			}
			if okOld || okNew {
				enqueueAll()
			}
		},
		DeleteFunc: func(obj any) {
			if _, ok := inRoot(obj); ok {
				enqueueAll()
			}
		},
	}
}
