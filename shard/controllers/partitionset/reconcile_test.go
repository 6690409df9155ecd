package partitionset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	topologyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/topology/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// fakeCluster is the state a reconcile reads and writes: one PartitionSet,
// the Shards of root, and the Partitions of the set's cluster.
type fakeCluster struct {
	set        *topologyv1alpha1.PartitionSet
	shards     []*corev1alpha1.Shard
	partitions []*topologyv1alpha1.Partition
	statuses   []topologyv1alpha1.PartitionSetStatus
	createErr  error
	generated  int
}

func (f *fakeCluster) reconciler(t *testing.T) *setReconciler {
	const cluster = logicalcluster.Name("provider")
	check := func(c logicalcluster.Name) {
		if c != cluster {
			t.Errorf("request for cluster %s, want %s", c, cluster)
		}
	}
	return &setReconciler{
		getSet: func(c logicalcluster.Name, name string) (*topologyv1alpha1.PartitionSet, error) {
			check(c)
			if f.set == nil || f.set.Name != name {
				return nil, apierrors.NewNotFound(topologyv1alpha1.Resource("partitionsets"), name)
			}
			return f.set, nil
		},
		listShards: func(selector labels.Selector) ([]*corev1alpha1.Shard, error) {
			var out []*corev1alpha1.Shard
			for _, s := range f.shards {
				if selector.Matches(labels.Set(s.Labels)) {
					out = append(out, s)
				}
			}
			return out, nil
		},
		listPartitions: func(_ context.Context, c logicalcluster.Name) ([]*topologyv1alpha1.Partition, error) {
			check(c)
			return slices.Clone(f.partitions), nil
		},
		createPartition: func(_ context.Context, c logicalcluster.Name, p *topologyv1alpha1.Partition) (*topologyv1alpha1.Partition, error) {
			check(c)
			if f.createErr != nil {
				return nil, f.createErr
			}
			f.generated++
			p = p.DeepCopy()
			p.Name = fmt.Sprintf("%s%05d", p.GenerateName, f.generated)
			p.UID = types.UID(p.Name)
			f.partitions = append(f.partitions, p)
			return p, nil
		},
		updatePartition: func(_ context.Context, c logicalcluster.Name, p *topologyv1alpha1.Partition) error {
			check(c)
			for i, old := range f.partitions {
				if old.Name == p.Name {
					f.partitions[i] = p.DeepCopy()
					return nil
				}
			}
			return apierrors.NewNotFound(topologyv1alpha1.Resource("partitions"), p.Name)
		},
		deletePartition: func(_ context.Context, c logicalcluster.Name, name string, uid types.UID) error {
			check(c)
			for i, p := range f.partitions {
				if p.Name == name && p.UID == uid {
					f.partitions = slices.Delete(f.partitions, i, i+1)
					return nil
				}
			}
			return apierrors.NewNotFound(topologyv1alpha1.Resource("partitions"), name)
		},
		updateStatus: func(_ context.Context, c logicalcluster.Name, set *topologyv1alpha1.PartitionSet) error {
			check(c)
			f.statuses = append(f.statuses, set.Status)
			f.set = set.DeepCopy()
			return nil
		},
	}
}

// selectors returns "<name>: <selector>" of each Partition.
func (f *fakeCluster) selectors(t *testing.T) []string {
	var out []string
	for _, p := range f.partitions {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Name+": "+sel.String())
	}
	slices.Sort(out)
	return out
}

// conditionStates returns "<type>=<status>[/<reason>]" of each condition.
func conditionStates(s *topologyv1alpha1.PartitionSet) []string {
	var out []string
	for _, c := range s.Status.Conditions {
		st := string(c.Type) + "=" + string(c.Status)
		if c.Reason != "" {
			st += "/" + c.Reason
		}
		out = append(out, st)
	}
	return out
}

var key = reconciler.Key{Cluster: "provider", Name: "regions"}

func TestReconcile(t *testing.T) {
	ready := []string{"PartitionSetValid=True", "PartitionsReady=True"}
	t.Run("partitions by region, the excluded shard left out", func(t *testing.T) {
		f := &fakeCluster{set: regions(), shards: []*corev1alpha1.Shard{
			shard("root", map[string]string{"name": "root"}),
			shard("eu-1", map[string]string{"region": "eu"}),
			shard("eu-2", map[string]string{"region": "eu"}),
			shard("us-1", map[string]string{"region": "us"}),
			shard("ap-1", map[string]string{"region": "ap", "excluded": "true"}),
		}}
		r := f.reconciler(t)
		if _, err := r.reconcile(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		want := []string{"regions-eu-00001: !excluded,region=eu", "regions-us-00002: !excluded,region=us"}
		if diff := cmp.Diff(want, f.selectors(t)); diff != "" {
			t.Errorf("partitions (-want +got):\n%s", diff)
		}
		if f.set.Status.Count != 2 {
			t.Errorf("count %d, want 2", f.set.Status.Count)
		}
		if diff := cmp.Diff(ready, conditionStates(f.set)); diff != "" {
			t.Errorf("conditions (-want +got):\n%s", diff)
		}

		// Nothing changed: nothing is written.
		if _, err := r.reconcile(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		if len(f.statuses) != 1 || len(f.partitions) != 2 {
			t.Errorf("%d status writes and %d partitions after a reconcile with nothing to do", len(f.statuses), len(f.partitions))
		}

		// The us shard moves to eu: one partition is left.
		f.shards[3] = shard("us-1", map[string]string{"region": "eu"})
		if _, err := r.reconcile(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"regions-eu-00001: !excluded,region=eu"}, f.selectors(t)); diff != "" {
			t.Errorf("partitions (-want +got):\n%s", diff)
		}
		if f.set.Status.Count != 1 {
			t.Errorf("count %d, want 1", f.set.Status.Count)
		}

		// The shard selector changes: the partition keeps its name.
		f.set.Spec.ShardSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}
		if _, err := r.reconcile(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"regions-eu-00001: region=eu"}, f.selectors(t)); diff != "" {
			t.Errorf("partitions (-want +got):\n%s", diff)
		}
	})

	t.Run("a Partition that cannot be created", func(t *testing.T) {
		f := &fakeCluster{set: regions(), shards: []*corev1alpha1.Shard{shard("eu-1", map[string]string{"region": "eu"})},
			createErr: apierrors.NewForbidden(topologyv1alpha1.Resource("partitions"), "", errors.New("no"))}
		_, err := f.reconciler(t).reconcile(t.Context(), key)
		if err == nil || !strings.Contains(err.Error(), "forbidden: no") {
			t.Errorf("error %v, want the create's", err)
		}
		if diff := cmp.Diff([]string{"PartitionSetValid=True", "PartitionsReady=False/ErrorGeneratingPartitions"}, conditionStates(f.set)); diff != "" {
			t.Errorf("conditions (-want +got):\n%s", diff)
		}
		if f.set.Status.Count != 1 {
			t.Errorf("count %d, want the one group", f.set.Status.Count)
		}
	})

	t.Run("a selector that cannot be evaluated", func(t *testing.T) {
		f := &fakeCluster{set: regions(func(s *topologyv1alpha1.PartitionSet) {
			s.Spec.ShardSelector.MatchExpressions[0].Operator = "Near"
		}), shards: []*corev1alpha1.Shard{shard("eu-1", map[string]string{"region": "eu"})}}
		if _, err := f.reconciler(t).reconcile(t.Context(), key); err != nil {
			t.Errorf("error %v: retrying cannot help", err)
		}
		if diff := cmp.Diff([]string{"PartitionSetValid=False/InvalidSelector", "PartitionsReady=False/ErrorGeneratingPartitions"}, conditionStates(f.set)); diff != "" {
			t.Errorf("conditions (-want +got):\n%s", diff)
		}
		if len(f.partitions) != 0 {
			t.Errorf("partitions %v", f.selectors(t))
		}
	})

	t.Run("a set that is gone", func(t *testing.T) {
		f := &fakeCluster{}
		if _, err := f.reconciler(t).reconcile(t.Context(), key); err != nil || len(f.statuses) != 0 {
			t.Errorf("error %v and %d status writes", err, len(f.statuses))
		}
	})

	t.Run("no group", func(t *testing.T) {
		f := &fakeCluster{set: regions(), shards: []*corev1alpha1.Shard{shard("root", map[string]string{"name": "root"})}}
		if _, err := f.reconciler(t).reconcile(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		if f.set.Status.Count != 0 || len(f.partitions) != 0 {
			t.Errorf("count %d and partitions %v", f.set.Status.Count, f.selectors(t))
		}
		if diff := cmp.Diff(ready, conditionStates(f.set)); diff != "" {
			t.Errorf("conditions (-want +got):\n%s", diff)
		}
	})
}

func TestOwnerKeys(t *testing.T) {
	p := existing(regions(), "regions-eu-x", map[string]string{"region": "eu"})
	p.Annotations = map[string]string{logicalcluster.AnnotationKey: "provider"}
	p.OwnerReferences = append(p.OwnerReferences,
		metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm"},
		metav1.OwnerReference{APIVersion: "other.io/v1", Kind: "PartitionSet", Name: "lookalike"})
	if diff := cmp.Diff([]reconciler.Key{key}, ownerKeys(p)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}
