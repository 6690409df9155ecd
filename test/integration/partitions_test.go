package integration

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// partitionsOf returns the Partitions of set in cluster by the region they
// select.
func partitionsOf(ctx context.Context, t *testing.T, s *framework.Shard, cluster logicalcluster.Name, set *topologyv1alpha1.PartitionSet) (map[string]topologyv1alpha1.Partition, error) {
	list, err := kcpClient(t, s, cluster).Partitions().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]topologyv1alpha1.Partition{}
	for _, p := range list.Items {
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != set.UID {
			continue
		}
		if p.Spec.Selector == nil {
			return nil, fmt.Errorf("partition %s has no selector", p.Name)
		}
		out[p.Spec.Selector.MatchLabels["region"]] = p
	}
	return out, nil
}

// waitSlice waits until the slice name in cluster has PartitionValid True
// (or not) and the endpoint URLs want (in any order), and returns it.
func waitSlice(t *testing.T, s *framework.Shard, cluster logicalcluster.Name, name string, partitionValid bool, want []string) *apisv1alpha1.APIExportEndpointSlice {
	t.Helper()
	want = slices.Sorted(slices.Values(want))
	var sl *apisv1alpha1.APIExportEndpointSlice
	var got []string
	eventually(t, 30*time.Second, fmt.Sprintf("slice %s with endpoints %v", name, want), func(ctx context.Context) (bool, error) {
		var err error
		sl, err = kcpClient(t, s, cluster).APIExportEndpointSlices().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = nil
		for _, e := range sl.Status.APIExportEndpoints {
			got = append(got, e.URL)
		}
		slices.Sort(got)
		valid := conditionsv1alpha1.IsTrue(sl, apisv1alpha1.PartitionValid)
		return valid == partitionValid && slices.Equal(got, want), fmt.Errorf("endpoints %v, PartitionValid %v", got, conditionsv1alpha1.Get(sl, apisv1alpha1.PartitionValid))
	})
	return sl
}

// TestPartitionSetEndpointSlices: a PartitionSet by region divides the
// Shards of root into one Partition per region; an APIExportEndpointSlice
// that names a Partition lists the export's virtual workspace on the shards
// of that partition only, and follows the shards and the partitions as they
// change.
func TestPartitionSetEndpointSlices(t *testing.T) {
	s := framework.StartShard(t)
	// The workspace exists before the shards below, which serve nothing:
	// it must be scheduled on this shard.
	createWorkspace(t, s, logicalcluster.Root, "provider", nil)
	provider := logicalcluster.Name("root:provider")
	ctx := t.Context()

	// Two more Shards, in two regions; the us one has a virtual workspace
	// URL of its own.
	for _, sh := range []*corev1alpha1.Shard{
		{ObjectMeta: metav1.ObjectMeta{Name: "eu-1", Labels: map[string]string{"region": "eu"}},
			Spec: corev1alpha1.ShardSpec{BaseURL: "https://eu-1.example.test:6443"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "us-1", Labels: map[string]string{"region": "us"}},
			Spec: corev1alpha1.ShardSpec{BaseURL: "https://us-1.example.test:6443", VirtualWorkspaceURL: "https://vw.us-1.example.test:7443"}},
	} {
		if _, err := kcpClient(t, s, logicalcluster.Root).Shards().Create(ctx, sh, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating shard %s: %v", sh.Name, err)
		}
	}
	export := &apisv1alpha1.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "cowboys"}}
	if _, err := kcpClient(t, s, provider).APIExports().Create(ctx, export, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	set := &topologyv1alpha1.PartitionSet{
		ObjectMeta: metav1.ObjectMeta{Name: "regions"},
		Spec: topologyv1alpha1.PartitionSetSpec{
			Dimensions: []string{"region"},
			ShardSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "excluded", Operator: metav1.LabelSelectorOpDoesNotExist},
			}},
		},
	}
	set, err := kcpClient(t, s, provider).PartitionSets().Create(ctx, set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// root (name=root) has no region: two partitions, eu and us.
	var parts map[string]topologyv1alpha1.Partition
	eventually(t, 30*time.Second, "two partitions and a count of 2", func(ctx context.Context) (bool, error) {
		got, err := kcpClient(t, s, provider).PartitionSets().Get(ctx, "regions", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if parts, err = partitionsOf(ctx, t, s, provider, set); err != nil {
			return false, err
		}
		return got.Status.Count == 2 && conditionsv1alpha1.IsTrue(got, topologyv1alpha1.PartitionsReady) && conditionsv1alpha1.IsTrue(got, topologyv1alpha1.PartitionSetValid) &&
			len(parts) == 2, fmt.Errorf("count %d, conditions %v, partitions %v", got.Status.Count, got.Status.Conditions, parts)
	})
	for _, region := range []string{"eu", "us"} {
		p, ok := parts[region]
		if !ok {
			t.Fatalf("no partition of region %s: %v", region, parts)
		}
		if !regexp.MustCompile(`^regions-` + region + `-[a-z0-9]{5}$`).MatchString(p.Name) {
			t.Errorf("partition %s is not named regions-%s-<suffix>", p.Name, region)
		}
		if p.Labels["region"] != region {
			t.Errorf("partition %s has labels %v", p.Name, p.Labels)
		}
		if o := p.OwnerReferences[0]; o.Kind != "PartitionSet" || o.Name != "regions" || o.APIVersion != "topology.kcp.io/v1alpha1" || o.Controller == nil || !*o.Controller {
			t.Errorf("partition %s has owner %+v", p.Name, o)
		}
		want := &metav1.LabelSelector{MatchLabels: map[string]string{"region": region}, MatchExpressions: set.Spec.ShardSelector.MatchExpressions}
		if got := p.Spec.Selector; got.String() != want.String() {
			t.Errorf("partition %s selects %v, want %v", p.Name, got, want)
		}
	}
	if out := s.MustKubectl(t, provider, "get", "partitionsets"); !regexp.MustCompile(`(?m)^regions\s+2\s+\S+$`).MatchString(out) {
		t.Errorf("kubectl get partitionsets:\n%s", out)
	}
	if out := s.MustKubectl(t, provider, "get", "partitions", "-l", "region=eu", "-o", "name"); strings.TrimSpace(out) != "partition.topology.kcp.io/"+parts["eu"].Name {
		t.Errorf("kubectl get partitions -l region=eu:\n%s", out)
	}

	// Slices of the eu and us partitions, of a partition that does not
	// exist, and of no partition.
	const path = "/services/apiexport/root:provider/cowboys"
	for name, partition := range map[string]string{"cowboys-eu": parts["eu"].Name, "cowboys-us": parts["us"].Name, "cowboys-nowhere": "nowhere", "cowboys": ""} {
		sl := &apisv1alpha1.APIExportEndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       apisv1alpha1.APIExportEndpointSliceSpec{APIExport: apisv1alpha1.ExportBindingReference{Path: "root:provider", Name: "cowboys"}, Partition: partition},
		}
		if _, err := kcpClient(t, s, provider).APIExportEndpointSlices().Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eu := waitSlice(t, s, provider, "cowboys-eu", true, []string{"https://eu-1.example.test:6443" + path})
	if eu.Status.ShardSelector != "!excluded,region=eu" {
		t.Errorf("status.shardSelector of the eu slice: %q", eu.Status.ShardSelector)
	}
	waitSlice(t, s, provider, "cowboys-us", true, []string{"https://vw.us-1.example.test:7443" + path})
	nowhere := waitSlice(t, s, provider, "cowboys-nowhere", false, nil)
	if c := conditionsv1alpha1.Get(nowhere, apisv1alpha1.PartitionValid); c == nil || c.Reason != apisv1alpha1.PartitionInvalidReferenceReason {
		t.Errorf("PartitionValid of a slice of a missing partition: %+v", c)
	}
	waitSlice(t, s, provider, "cowboys", true, []string{"https://eu-1.example.test:6443" + path, s.URL + path, "https://vw.us-1.example.test:7443" + path})

	// The us shard moves to eu: the us partition goes, its slice has no
	// endpoints any more, and the eu slice lists both shards.
	us1, err := kcpClient(t, s, logicalcluster.Root).Shards().Get(ctx, "us-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	us1.Labels["region"] = "eu"
	if _, err := kcpClient(t, s, logicalcluster.Root).Shards().Update(ctx, us1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, s, provider, "cowboys-eu", true, []string{"https://eu-1.example.test:6443" + path, "https://vw.us-1.example.test:7443" + path})
	waitSlice(t, s, provider, "cowboys-us", false, nil)
	eventually(t, 30*time.Second, "one partition and a count of 1", func(ctx context.Context) (bool, error) {
		got, err := kcpClient(t, s, provider).PartitionSets().Get(ctx, "regions", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		parts, err := partitionsOf(ctx, t, s, provider, set)
		return err == nil && got.Status.Count == 1 && len(parts) == 1, err
	})

	// A Partition written by hand: the slice of the missing partition
	// follows it as soon as it exists.
	byHand := &topologyv1alpha1.Partition{
		ObjectMeta: metav1.ObjectMeta{Name: "nowhere"},
		Spec:       topologyv1alpha1.PartitionSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "root"}}},
	}
	if _, err := kcpClient(t, s, provider).Partitions().Create(ctx, byHand, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, s, provider, "cowboys-nowhere", true, []string{s.URL + path})

	// Deleting the set deletes its partitions (garbage collection); the
	// eu slice loses its endpoints.
	if err := kcpClient(t, s, provider).PartitionSets().Delete(ctx, "regions", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSlice(t, s, provider, "cowboys-eu", false, nil)
}
