package apiexportendpointslice

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func shard(name, url string, labels map[string]string) *corev1alpha1.Shard {
	return &corev1alpha1.Shard{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1alpha1.ShardSpec{BaseURL: url}}
}

// installation has the root shard and two more, one per region; the eu
// shard serves virtual workspaces at a URL of its own.
var installation = []*corev1alpha1.Shard{
	shard("root", "https://root:6443", map[string]string{"name": "root"}),
	shard("eu", "https://eu:6443", map[string]string{"region": "eu"}),
	func() *corev1alpha1.Shard {
		s := shard("us", "https://us:6443", map[string]string{"region": "us"})
		s.Spec.VirtualWorkspaceURL = "https://vw.us:7443/"
		return s
	}(),
}

// partitions of the provider's cluster.
var partitions = map[string]*topologyv1alpha1.Partition{
	"eu":      {ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: topologyv1alpha1.PartitionSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}},
	"regions": {ObjectMeta: metav1.ObjectMeta{Name: "regions"}, Spec: topologyv1alpha1.PartitionSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpExists}}}}},
	"none":    {ObjectMeta: metav1.ObjectMeta{Name: "none"}},
	"broken":  {ObjectMeta: metav1.ObjectMeta{Name: "broken"}, Spec: topologyv1alpha1.PartitionSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: "Near"}}}}},
}

const provider = logicalcluster.Name("provider")

// run reconciles a slice of the cowboys export of provider that names
// partition, and returns the status written (nil if none was).
func run(t *testing.T, partition string) *apisv1alpha1.APIExportEndpointSliceStatus {
	t.Helper()
	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "cowboys", Annotations: map[string]string{logicalcluster.AnnotationKey: string(provider)}},
		Spec:       apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Path: "root:provider", Name: "cowboys"}, Partition: partition},
	}
	export := &apisv1alpha1.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "cowboys", Annotations: map[string]string{logicalcluster.AnnotationKey: string(provider)}}}
	var written *apisv1alpha1.APIExportEndpointSliceStatus
	r := &sliceReconciler{
		getSlice: func(cluster logicalcluster.Name, name string) (*apisv1alpha1.APIExportEndpointSlice, error) {
			return slice, nil
		},
		getExport: func(cluster logicalcluster.Name, name string) (*apisv1alpha1.APIExport, error) {
			if cluster != provider || name != "cowboys" {
				return nil, apierrors.NewNotFound(apisv1alpha1.Resource("apiexports"), name)
			}
			return export, nil
		},
		getPartition: func(cluster logicalcluster.Name, name string) (*topologyv1alpha1.Partition, error) {
			if p, ok := partitions[name]; ok && cluster == provider {
				return p, nil
			}
			return nil, apierrors.NewNotFound(topologyv1alpha1.Resource("partitions"), name)
		},
		listShards: func() ([]*corev1alpha1.Shard, error) { return installation, nil },
		resolvePath: func(p logicalcluster.Path) (logicalcluster.Name, bool) {
			return provider, p.String() == "root:provider"
		},
		pathOf: func(logicalcluster.Name) string { return "root:provider" },
		updateStatus: func(_ context.Context, s *apisv1alpha1.APIExportEndpointSlice) error {
			written = &s.Status
			return nil
		},
	}
	if _, err := r.reconcile(t.Context(), reconciler.Key{Cluster: provider, Name: "cowboys"}); err != nil {
		t.Fatal(err)
	}
	if slice.Status.APIExportEndpoints != nil {
		t.Errorf("the cached slice was modified")
	}
	return written
}

func TestPartitions(t *testing.T) {
	const path = "/services/apiexport/root:provider/cowboys"
	for _, tc := range []struct {
		partition  string
		want       []string // endpoint URLs
		selector   string
		conditions []string
	}{
		{partition: "", want: []string{"https://eu:6443" + path, "https://root:6443" + path, "https://vw.us:7443" + path},
			conditions: []string{"APIExportValid=True", "EndpointURLsReady=True", "PartitionValid=True"}},
		{partition: "eu", want: []string{"https://eu:6443" + path}, selector: "region=eu",
			conditions: []string{"APIExportValid=True", "EndpointURLsReady=True", "PartitionValid=True"}},
		{partition: "regions", want: []string{"https://eu:6443" + path, "https://vw.us:7443" + path}, selector: "region",
			conditions: []string{"APIExportValid=True", "EndpointURLsReady=True", "PartitionValid=True"}},
		{partition: "none", want: []string{},
			conditions: []string{"APIExportValid=True", "EndpointURLsReady=True", "PartitionValid=True"}},
		{partition: "missing",
			conditions: []string{"APIExportValid=True", "EndpointURLsReady=False/PartitionInvalidReference", "PartitionValid=False/PartitionInvalidReference"}},
		{partition: "broken",
			conditions: []string{"APIExportValid=True", "EndpointURLsReady=False/PartitionInvalidReference", "PartitionValid=False/PartitionInvalidReference"}},
	} {
		t.Run("partition "+tc.partition, func(t *testing.T) {
			status := run(t, tc.partition)
			if status == nil {
				t.Fatal("no status written")
			}
			var urls []string
			if status.APIExportEndpoints != nil {
				urls = []string{}
			}
			for _, e := range status.APIExportEndpoints {
				urls = append(urls, e.URL)
			}
			if diff := cmp.Diff(tc.want, urls); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
			if status.ShardSelector != tc.selector {
				t.Errorf("shardSelector %q, want %q", status.ShardSelector, tc.selector)
			}
			var conditions []string
			for _, c := range status.Conditions {
				s := string(c.Type) + "=" + string(c.Status)
				if c.Reason != "" {
					s += "/" + c.Reason
				}
				conditions = append(conditions, s)
			}
			if diff := cmp.Diff(tc.conditions, conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPartitionIndex(t *testing.T) {
	slice := func(partition string) *apisv1alpha1.APIExportEndpointSlice {
		return &apisv1alpha1.APIExportEndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Annotations: map[string]string{logicalcluster.AnnotationKey: "provider"}},
			Spec:       apisv1alpha1.APIExportEndpointSliceSpec{Partition: partition},
		}
	}
	if got, _ := partitionIndex(slice("eu")); !cmp.Equal(got, []string{"provider|eu"}) {
		t.Errorf("index of a slice of partition eu: %v", got)
	}
	if got, _ := partitionIndex(slice("")); got != nil {
		t.Errorf("index of a slice without partition: %v", got)
	}
}
