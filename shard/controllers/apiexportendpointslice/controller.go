// Package apiexportendpointslice fills in the endpoints of every
// APIExportEndpointSlice of the shard, as kcp does: one URL per Shard of
// the installation (the Shards of root), <virtual workspace URL of the
// shard>/services/apiexport/<export workspace path>/<export name>, where
// the apiexport virtual workspace serves the export's consumers on that
// shard.
//
// A slice whose export is not found has no endpoints and APIExportValid
// False. A slice that names a Partition (of its own logical cluster) lists
// only the shards its selector selects, and has the selector as a string
// in status.shardSelector (kcp's field); while the Partition is not found
// it has no endpoints and PartitionValid False. A slice without a
// partition has PartitionValid True, as in kcp.
package apiexportendpointslice

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// byExport indexes slices by "<path>|<export name>" as they reference the
// export (the path is the slice's own cluster when the reference has none).
const byExport = "apis.kcp.io/slice-export"

// byPartition indexes the slices that name a partition by
// "<cluster>|<partition name>".
const byPartition = "apis.kcp.io/slice-partition"

func refKey(path, name string) string { return path + "|" + name }

func exportIndex(obj any) ([]string, error) {
	s, ok := obj.(*apisv1alpha1.APIExportEndpointSlice)
	if !ok {
		return nil, nil
	}
	path := s.Spec.APIExport.Path
	if path == "" {
		path = logicalcluster.From(s).String()
	}
	return []string{refKey(path, s.Spec.APIExport.Name)}, nil
}

func partitionIndex(obj any) ([]string, error) {
	s, ok := obj.(*apisv1alpha1.APIExportEndpointSlice)
	if !ok || s.Spec.Partition == "" {
		return nil, nil
	}
	return []string{refKey(logicalcluster.From(s).String(), s.Spec.Partition)}, nil
}

// Config is what the controller needs.
type Config struct {
	Factory *informers.SharedInformerFactory
	KCP     *clusters.KCPClusterClientset
	// ResolvePath maps a workspace path or cluster name to its cluster.
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	// PathOf returns the canonical path of a logical cluster, "" if unknown.
	PathOf func(logicalcluster.Name) string
	// Shards, if set, replaces the factory's Shards informer (e.g. a union
	// with the cache's replicas on a shard that does not host root).
	Shards *informers.Informer[*corev1alpha1.Shard]
}

// Controller is the APIExportEndpointSlice controller.
type Controller struct {
	*reconciler.Controller
	cfg        Config
	slices     informers.Informer[*apisv1alpha1.APIExportEndpointSlice]
	exports    informers.Informer[*apisv1alpha1.APIExport]
	partitions informers.Informer[*topologyv1alpha1.Partition]
	shards     informers.Informer[*corev1alpha1.Shard]
}

// New wires the controller.
func New(cfg Config) (*Controller, error) {
	f := cfg.Factory
	c := &Controller{cfg: cfg, slices: f.APIExportEndpointSlices(), exports: f.APIExports(), partitions: f.Partitions(), shards: f.Shards()}
	if cfg.Shards != nil {
		c.shards = *cfg.Shards
	}
	if err := c.slices.Informer().AddIndexers(cache.Indexers{byExport: exportIndex, byPartition: partitionIndex}); err != nil {
		return nil, err
	}
	r := &sliceReconciler{
		getSlice: func(cluster logicalcluster.Name, name string) (*apisv1alpha1.APIExportEndpointSlice, error) {
			return c.slices.Lister().Cluster(cluster).Get(name)
		},
		getExport: func(cluster logicalcluster.Name, name string) (*apisv1alpha1.APIExport, error) {
			return c.exports.Lister().Cluster(cluster).Get(name)
		},
		getPartition: func(cluster logicalcluster.Name, name string) (*topologyv1alpha1.Partition, error) {
			return c.partitions.Lister().Cluster(cluster).Get(name)
		},
		listShards: func() ([]*corev1alpha1.Shard, error) {
			return c.shards.Lister().Cluster(logicalcluster.Root).List(labels.Everything())
		},
		resolvePath: cfg.ResolvePath,
		pathOf:      cfg.PathOf,
		updateStatus: func(ctx context.Context, s *apisv1alpha1.APIExportEndpointSlice) error {
			client, err := cfg.KCP.For(logicalcluster.From(s))
			if err != nil {
				return err
			}
			_, err = client.APIExportEndpointSlices().UpdateStatus(ctx, s, metav1.UpdateOptions{})
			return err
		},
	}
	c.Controller = reconciler.New("apiexportendpointslice", reconciler.Func(r.reconcile), reconciler.Options{Workers: 2})
	if err := c.Watch(c.slices.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	if err := c.Watch(c.exports.Informer(), reconciler.EnqueueMappedHandler(c.Controller, c.slicesOfExport)); err != nil {
		return nil, err
	}
	if err := c.Watch(c.partitions.Informer(), reconciler.EnqueueMappedHandler(c.Controller, c.slicesOfPartition)); err != nil {
		return nil, err
	}
	// Shards are few and change rarely: every slice follows them.
	if err := c.Watch(c.shards.Informer(), reconciler.EnqueueMappedHandler(c.Controller, func(any) []reconciler.Key { return c.allSlices() })); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) slicesOfExport(obj any) []reconciler.Key {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	e, ok := obj.(*apisv1alpha1.APIExport)
	if !ok {
		return nil
	}
	cluster := logicalcluster.From(e)
	values := []string{refKey(cluster.String(), e.Name)}
	if p := c.cfg.PathOf(cluster); p != "" {
		values = append(values, refKey(p, e.Name))
	}
	var keys []reconciler.Key
	for _, v := range values {
		keys = append(keys, c.slicesByIndex(byExport, v)...)
	}
	return keys
}

// slicesOfPartition returns the slices of p's cluster that name p.
func (c *Controller) slicesOfPartition(p *topologyv1alpha1.Partition) []reconciler.Key {
	return c.slicesByIndex(byPartition, refKey(logicalcluster.From(p).String(), p.Name))
}

func (c *Controller) slicesByIndex(index, value string) []reconciler.Key {
	objs, _ := c.slices.Informer().GetIndexer().ByIndex(index, value)
	var keys []reconciler.Key
	for _, o := range objs {
		if s, ok := o.(*apisv1alpha1.APIExportEndpointSlice); ok {
			keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(s), Name: s.Name})
		}
	}
	return keys
}

func (c *Controller) allSlices() []reconciler.Key {
	all, err := c.slices.Lister().List(labels.Everything())
	if err != nil {
		return nil
	}
	keys := make([]reconciler.Key, 0, len(all))
	for _, s := range all {
		keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(s), Name: s.Name})
	}
	return keys
}
