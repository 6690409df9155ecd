package apiexportendpointslice

import (
	"context"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	apiexportvw "github.com/tessera-dev/tessera/virtual/apiexport"
)

// sliceReconciler writes the status of slices. Its dependencies are plain
// functions, so it is tested without an API server.
type sliceReconciler struct {
	getSlice     func(cluster logicalcluster.Name, name string) (*apisv1alpha1.APIExportEndpointSlice, error)
	getExport    func(cluster logicalcluster.Name, name string) (*apisv1alpha1.APIExport, error)
	getPartition func(cluster logicalcluster.Name, name string) (*topologyv1alpha1.Partition, error)
	// listShards returns the Shards of the installation.
	listShards func() ([]*corev1alpha1.Shard, error)
	// resolvePath maps a workspace path or cluster name to its cluster.
	resolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	// pathOf returns the canonical path of a logical cluster, "" if
	// unknown.
	pathOf       func(logicalcluster.Name) string
	updateStatus func(ctx context.Context, s *apisv1alpha1.APIExportEndpointSlice) error
}

func (r *sliceReconciler) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	slice, err := r.getSlice(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	updated := slice.DeepCopy()
	if err := r.compute(key.Cluster, updated); err != nil {
		return reconciler.Result{}, err
	}
	if equality.Semantic.DeepEqual(slice.Status, updated.Status) {
		return reconciler.Result{}, nil
	}
	return reconciler.Result{}, r.updateStatus(ctx, updated)
}

// compute sets the status of s (a copy, of cluster). It fails only when
// a cache cannot be read.
func (r *sliceReconciler) compute(cluster logicalcluster.Name, s *apisv1alpha1.APIExportEndpointSlice) error {
	ref := s.Spec.APIExport
	exportCluster := cluster
	if ref.Path != "" {
		name, ok := r.resolvePath(logicalcluster.NewPath(ref.Path))
		if !ok {
			invalidExport(s, "workspace %s not found", ref.Path)
			return nil
		}
		exportCluster = name
	}
	export, err := r.getExport(exportCluster, ref.Name)
	if apierrors.IsNotFound(err) {
		invalidExport(s, "APIExport %s not found", ref.Name)
		return nil
	}
	if err != nil {
		return err
	}
	conditionsv1alpha1.MarkTrue(s, apisv1alpha1.APIExportEndpointSliceValid)

	selector := labels.Everything()
	if s.Spec.Partition != "" {
		partition, err := r.getPartition(cluster, s.Spec.Partition)
		if apierrors.IsNotFound(err) {
			invalidPartition(s, "Partition %s not found", s.Spec.Partition)
			return nil
		}
		if err != nil {
			return err
		}
		// A Partition without selector selects no shard.
		selector, err = metav1.LabelSelectorAsSelector(partition.Spec.Selector)
		if err != nil {
			invalidPartition(s, "the selector of Partition %s: %v", s.Spec.Partition, err)
			return nil
		}
	}
	conditionsv1alpha1.MarkTrue(s, apisv1alpha1.PartitionValid)
	s.Status.ShardSelector = selector.String()

	exportPath := r.pathOf(logicalcluster.From(export))
	if exportPath == "" {
		exportPath = logicalcluster.From(export).String()
	}
	shards, err := r.listShards()
	if err != nil {
		return err
	}
	s.Status.APIExportEndpoints = endpoints(shards, selector, exportPath, export.Name)
	conditionsv1alpha1.MarkTrue(s, apisv1alpha1.APIExportEndpointSliceURLsReady)
	return nil
}

// endpoints returns the URLs of the export's virtual workspace on the
// shards selector selects, sorted, each once: the shard's virtual
// workspace URL, or its base URL, and the path of the export.
func endpoints(shards []*corev1alpha1.Shard, selector labels.Selector, exportPath, exportName string) []apisv1alpha1.APIExportEndpoint {
	urls := map[string]bool{}
	for _, sh := range shards {
		if !selector.Matches(labels.Set(sh.Labels)) {
			continue
		}
		base := sh.Spec.VirtualWorkspaceURL
		if base == "" {
			base = sh.Spec.BaseURL
		}
		if base == "" {
			continue
		}
		urls[strings.TrimRight(base, "/")+apiexportvw.URLFor(exportPath, exportName)] = true
	}
	out := make([]apisv1alpha1.APIExportEndpoint, 0, len(urls))
	for u := range urls {
		out = append(out, apisv1alpha1.APIExportEndpoint{URL: u})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

func invalidExport(s *apisv1alpha1.APIExportEndpointSlice, format string, args ...any) {
	conditionsv1alpha1.MarkFalse(s, apisv1alpha1.APIExportEndpointSliceValid, apisv1alpha1.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError, format, args...)
	s.Status.APIExportEndpoints = nil
	conditionsv1alpha1.MarkFalse(s, apisv1alpha1.APIExportEndpointSliceURLsReady, apisv1alpha1.APIExportNotFoundReason, conditionsv1alpha1.ConditionSeverityError,
		"no endpoints without the APIExport")
}

func invalidPartition(s *apisv1alpha1.APIExportEndpointSlice, format string, args ...any) {
	conditionsv1alpha1.MarkFalse(s, apisv1alpha1.PartitionValid, apisv1alpha1.PartitionInvalidReferenceReason, conditionsv1alpha1.ConditionSeverityError, format, args...)
	s.Status.APIExportEndpoints = nil
	s.Status.ShardSelector = ""
	conditionsv1alpha1.MarkFalse(s, apisv1alpha1.APIExportEndpointSliceURLsReady, apisv1alpha1.PartitionInvalidReferenceReason, conditionsv1alpha1.ConditionSeverityError,
		"no endpoints while the partition is invalid")
}

// URLs returns the URL of the export's virtual workspace on every Shard
// of the installation (those of root), sorted, for the export's
// status.virtualWorkspaces.
func URLs(shards []*corev1alpha1.Shard, pathOf func(logicalcluster.Name) string, export *apisv1alpha1.APIExport) []string {
	exportPath := pathOf(logicalcluster.From(export))
	if exportPath == "" {
		exportPath = logicalcluster.From(export).String()
	}
	var out []string
	for _, e := range endpoints(shards, labels.Everything(), exportPath, export.Name) {
		out = append(out, e.URL)
	}
	return out
}
