// Package apiexportendpointslice fills in the endpoints of every
// APIExportEndpointSlice of the shard, as kcp does: one URL per Shard of
// the installation, <virtual workspace URL of the shard>/services/apiexport/
// <export workspace path>/<export name>, where the apiexport virtual
// workspace serves the export's consumers on that shard. A slice whose
// export is not found has no endpoints and APIExportValid False; a slice
// that names a Partition has none either, with PartitionValid False, until
// Partitions are served.
package apiexportendpointslice

import (
	"context"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
)

// byExport indexes slices by "<path>|<export name>" as they reference the
// export (the path is the slice's own cluster when the reference has none).
const byExport = "apis.kcp.io/slice-export"

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

// Config is what the controller needs.
type Config struct {
	Factory *informers.SharedInformerFactory
	KCP     *clusters.KCPClusterClientset
	// ResolvePath maps a workspace path or cluster name to its cluster.
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	// PathOf returns the canonical path of a logical cluster, "" if unknown.
	PathOf func(logicalcluster.Name) string
}

// Controller is the APIExportEndpointSlice controller.
type Controller struct {
	*reconciler.Controller
	cfg     Config
	slices  informers.Informer[*apisv1alpha1.APIExportEndpointSlice]
	exports informers.Informer[*apisv1alpha1.APIExport]
	shards  informers.Informer[*corev1alpha1.Shard]
}

// New wires the controller.
func New(cfg Config) (*Controller, error) {
	f := cfg.Factory
	c := &Controller{cfg: cfg, slices: f.APIExportEndpointSlices(), exports: f.APIExports(), shards: f.Shards()}
	if err := c.slices.Informer().AddIndexers(cache.Indexers{byExport: exportIndex}); err != nil {
		return nil, err
	}
	c.Controller = reconciler.New("apiexportendpointslice", reconciler.Func(c.reconcile), reconciler.Options{Workers: 2})
	if err := c.Watch(c.slices.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	if err := c.Watch(c.exports.Informer(), reconciler.EnqueueMappedHandler(c.Controller, c.slicesOfExport)); err != nil {
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
		objs, _ := c.slices.Informer().GetIndexer().ByIndex(byExport, v)
		for _, o := range objs {
			if s, ok := o.(*apisv1alpha1.APIExportEndpointSlice); ok {
				keys = append(keys, reconciler.Key{Cluster: logicalcluster.From(s), Name: s.Name})
			}
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

func (c *Controller) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	slice, err := c.slices.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	updated := slice.DeepCopy()
	c.compute(key.Cluster, updated)
	if equality.Semantic.DeepEqual(slice.Status, updated.Status) {
		return reconciler.Result{}, nil
	}
	client, err := c.cfg.KCP.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	_, err = client.APIExportEndpointSlices().UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return reconciler.Result{}, err
}

// compute sets the status of s (a copy).
func (c *Controller) compute(cluster logicalcluster.Name, s *apisv1alpha1.APIExportEndpointSlice) {
	ref := s.Spec.APIExport
	exportCluster := cluster
	if ref.Path != "" {
		name, ok := c.cfg.ResolvePath(logicalcluster.NewPath(ref.Path))
		if !ok {
			c.invalid(s, "workspace %s not found", ref.Path)
			return
		}
		exportCluster = name
	}
	export, err := c.exports.Lister().Cluster(exportCluster).Get(ref.Name)
	if err != nil {
		c.invalid(s, "APIExport %s not found", ref.Name)
		return
	}
	conditionsv1alpha1.MarkTrue(s, apisv1alpha1.APIExportEndpointSliceValid)
	if s.Spec.Partition != "" {
		conditionsv1alpha1.MarkFalse(s, apisv1alpha1.PartitionValid, apisv1alpha1.PartitionInvalidReferenceReason, conditionsv1alpha1.ConditionSeverityError,
			"Partition %s not found", s.Spec.Partition)
		s.Status.APIExportEndpoints = nil
		conditionsv1alpha1.MarkFalse(s, apisv1alpha1.APIExportEndpointSliceURLsReady, apisv1alpha1.PartitionInvalidReferenceReason, conditionsv1alpha1.ConditionSeverityError,
			"no endpoints while the partition is invalid")
		return
	}
	conditionsv1alpha1.Delete(s, apisv1alpha1.PartitionValid)
	var endpoints []apisv1alpha1.APIExportEndpoint
	for _, u := range URLs(c.shards, c.cfg.PathOf, export) {
		endpoints = append(endpoints, apisv1alpha1.APIExportEndpoint{URL: u})
	}
	s.Status.APIExportEndpoints = endpoints
	conditionsv1alpha1.MarkTrue(s, apisv1alpha1.APIExportEndpointSliceURLsReady)
}

func (c *Controller) invalid(s *apisv1alpha1.APIExportEndpointSlice, format string, args ...any) {
	conditionsv1alpha1.MarkFalse(s, apisv1alpha1.APIExportEndpointSliceValid, apisv1alpha1.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError, format, args...)
	s.Status.APIExportEndpoints = nil
	conditionsv1alpha1.MarkFalse(s, apisv1alpha1.APIExportEndpointSliceURLsReady, apisv1alpha1.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError,
		"no endpoints without the APIExport")
}

// URLs returns the URL of the export's virtual workspace on every shard,
// sorted: <virtual workspace URL of the shard>/services/apiexport/<export
// workspace path>/<export name>.
func URLs(shards informers.Informer[*corev1alpha1.Shard], pathOf func(logicalcluster.Name) string, export *apisv1alpha1.APIExport) []string {
	exportPath := pathOf(logicalcluster.From(export))
	if exportPath == "" {
		exportPath = logicalcluster.From(export).String()
	}
	list, err := shards.Lister().List(labels.Everything())
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	for _, sh := range list {
		base := sh.Spec.VirtualWorkspaceURL
		if base == "" {
			base = sh.Spec.BaseURL
		}
		if base != "" {
			set[strings.TrimRight(base, "/")+apiexportvw.URLFor(exportPath, export.Name)] = true
		}
	}
	out := make([]string, 0, len(set))
	for u := range set {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}
