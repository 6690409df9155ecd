package logicalclusterdeletion

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

type lcOption func(*corev1alpha1.LogicalCluster)

func newLogicalCluster(cluster logicalcluster.Name, opts ...lcOption) *corev1alpha1.LogicalCluster {
	lc := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{
		Name:            corev1alpha1.LogicalClusterName,
		UID:             "uid",
		ResourceVersion: "10",
		Annotations:     map[string]string{logicalcluster.AnnotationKey: cluster.String()},
		Finalizers:      []string{Finalizer},
	}}
	for _, o := range opts {
		o(lc)
	}
	return lc
}

// deleted marks lc deleted a minute ago, longer than settleTime.
func deleted(lc *corev1alpha1.LogicalCluster) {
	then := metav1.NewTime(time.Now().Add(-time.Minute))
	lc.DeletionTimestamp = &then
}

// justDeleted marks lc deleted now.
func justDeleted(lc *corev1alpha1.LogicalCluster) {
	now := metav1.Now()
	lc.DeletionTimestamp = &now
}

func finalizers(fs ...string) lcOption {
	return func(lc *corev1alpha1.LogicalCluster) { lc.Finalizers = fs }
}

func owned(lc *corev1alpha1.LogicalCluster) {
	lc.Spec.Owner = &corev1alpha1.LogicalClusterOwner{APIVersion: "tenancy.kcp.io/v1alpha1", Resource: "workspaces", Name: "ws", Cluster: "root", UID: "owner"}
}

// fakeShard is a shard with one LogicalCluster in its cache; it records
// content deletions and writes.
type fakeShard struct {
	lc            *corev1alpha1.LogicalCluster
	deleteErr     error
	statusErr     error
	finalizersErr error

	deletedData   []logicalcluster.Name
	statusWrites  []*corev1alpha1.LogicalCluster
	finalizerSets [][]string
}

func (s *fakeShard) deleter() *deleter {
	return &deleter{
		getLogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			if s.lc == nil || logicalcluster.From(s.lc) != cluster {
				return nil, apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), corev1alpha1.LogicalClusterName)
			}
			return s.lc, nil
		},
		deleteClusterData: func(_ context.Context, cluster logicalcluster.Name) error {
			s.deletedData = append(s.deletedData, cluster)
			return s.deleteErr
		},
		writeStatus: func(_ context.Context, cluster logicalcluster.Name, old, new *corev1alpha1.LogicalCluster) (*corev1alpha1.LogicalCluster, error) {
			if s.statusErr != nil {
				return nil, s.statusErr
			}
			if logicalcluster.From(old) != cluster {
				return nil, fmt.Errorf("status of %s written to %s", logicalcluster.From(old), cluster)
			}
			written := new.DeepCopy()
			written.ResourceVersion = "11"
			s.statusWrites = append(s.statusWrites, written)
			return written, nil
		},
		writeFinalizers: func(_ context.Context, cluster logicalcluster.Name, old, new *corev1alpha1.LogicalCluster) error {
			if s.finalizersErr != nil {
				return s.finalizersErr
			}
			if want := fmt.Sprint(10 + len(s.statusWrites)); old.ResourceVersion != want {
				return fmt.Errorf("finalizers written on resourceVersion %s, want %s", old.ResourceVersion, want)
			}
			s.finalizerSets = append(s.finalizerSets, new.Finalizers)
			return nil
		},
	}
}

func reported(reason, msg string) lcOption {
	return func(lc *corev1alpha1.LogicalCluster) {
		conditionsv1alpha1.MarkFalse(lc, corev1alpha1.WorkspaceContentDeleted, reason, conditionsv1alpha1.ConditionSeverityInfo, "%s", msg)
	}
}

func conditions(lc *corev1alpha1.LogicalCluster) []string {
	var out []string
	for _, c := range lc.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return out
}

func TestReconcile(t *testing.T) {
	const x logicalcluster.Name = "x"
	key := reconciler.Key{Cluster: x, Name: corev1alpha1.LogicalClusterName}
	errBoom := errors.New("boom")
	conflict := apierrors.NewConflict(corev1alpha1.Resource("logicalclusters"), "cluster", errBoom)
	held := &WaitError{After: 3 * time.Second, Reason: "held", ConditionReason: FinalizersRemainReason, ConditionMessage: "a/b in 1 resource instances"}
	children := &WaitError{After: 2 * time.Second, Reason: "children"}
	for _, tc := range []struct {
		name  string
		shard *fakeShard
		key   reconciler.Key

		wantErr        error
		wantAfter      time.Duration
		wantDeleted    bool
		wantConditions [][]string
		wantFinalizers [][]string
	}{
		{name: "not deleted", shard: &fakeShard{lc: newLogicalCluster(x)}, key: key},
		{name: "gone", shard: &fakeShard{}, key: key},
		{name: "finalizer already removed", shard: &fakeShard{lc: newLogicalCluster(x, deleted, finalizers("other"))}, key: key},
		{name: "not the LogicalCluster singleton", shard: &fakeShard{lc: newLogicalCluster(x, deleted)}, key: reconciler.Key{Cluster: x, Name: "other"}},
		{
			name:           "content deleted, then the finalizer removed",
			shard:          &fakeShard{lc: newLogicalCluster(x, deleted)},
			key:            key,
			wantDeleted:    true,
			wantFinalizers: [][]string{nil},
		},
		{
			name:        "a cluster deleted just now is deleted once more before it is released",
			shard:       &fakeShard{lc: newLogicalCluster(x, justDeleted)},
			key:         key,
			wantAfter:   settleTime,
			wantDeleted: true,
		},
		{
			name:           "an owner changes nothing yet",
			shard:          &fakeShard{lc: newLogicalCluster(x, deleted, owned)},
			key:            key,
			wantDeleted:    true,
			wantFinalizers: [][]string{nil},
		},
		{
			name:           "other finalizers stay, and the conditions say the content is gone",
			shard:          &fakeShard{lc: newLogicalCluster(x, deleted, finalizers("a", Finalizer, "b"))},
			key:            key,
			wantDeleted:    true,
			wantConditions: [][]string{{"WorkspaceContentDeleted=True/", "WorkspaceDeletionContentSuccess=True/"}},
			wantFinalizers: [][]string{{"a", "b"}},
		},
		{
			name:           "a failed content deletion is reported and retried",
			shard:          &fakeShard{lc: newLogicalCluster(x, deleted), deleteErr: errBoom},
			key:            key,
			wantErr:        errBoom,
			wantDeleted:    true,
			wantConditions: [][]string{{"WorkspaceContentDeleted=False/Deleting", "WorkspaceDeletionContentSuccess=False/DeletionFailed"}},
		},
		{
			name:           "finalizers that hold the content are reported and waited for",
			shard:          &fakeShard{lc: newLogicalCluster(x, deleted), deleteErr: held},
			key:            key,
			wantAfter:      3 * time.Second,
			wantDeleted:    true,
			wantConditions: [][]string{{"WorkspaceContentDeleted=False/SomeFinalizersRemain"}},
		},
		{
			name:        "finalizers already reported are not written again",
			shard:       &fakeShard{lc: newLogicalCluster(x, deleted, reported(FinalizersRemainReason, "a/b in 1 resource instances")), deleteErr: held},
			key:         key,
			wantAfter:   3 * time.Second,
			wantDeleted: true,
		},
		{
			name:        "waiting for child workspaces writes nothing",
			shard:       &fakeShard{lc: newLogicalCluster(x, deleted), deleteErr: children},
			key:         key,
			wantAfter:   2 * time.Second,
			wantDeleted: true,
		},
		{
			name:        "a failed report of a failed deletion is retried too",
			shard:       &fakeShard{lc: newLogicalCluster(x, deleted), deleteErr: errBoom, statusErr: errors.New("status")},
			key:         key,
			wantErr:     errBoom,
			wantDeleted: true,
		},
		{
			name:        "a conflict on the finalizers waits for the cache",
			shard:       &fakeShard{lc: newLogicalCluster(x, deleted), finalizersErr: conflict},
			key:         key,
			wantAfter:   time.Second,
			wantDeleted: true,
		},
		{
			name:        "a conflict on the status waits for the cache",
			shard:       &fakeShard{lc: newLogicalCluster(x, deleted, finalizers(Finalizer, "b")), statusErr: conflict},
			key:         key,
			wantAfter:   time.Second,
			wantDeleted: true,
		},
		{
			name:        "the LogicalCluster went away meanwhile",
			shard:       &fakeShard{lc: newLogicalCluster(x, deleted), finalizersErr: apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), "cluster")},
			key:         key,
			wantDeleted: true,
		},
		{
			name:        "failed finalizer writes are retried",
			shard:       &fakeShard{lc: newLogicalCluster(x, deleted), finalizersErr: errBoom},
			key:         key,
			wantErr:     errBoom,
			wantDeleted: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var before *corev1alpha1.LogicalCluster
			if tc.shard.lc != nil {
				before = tc.shard.lc.DeepCopy()
			}
			result, err := tc.shard.deleter().reconcile(ctx, tc.key)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("reconcile: err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantAfter == settleTime {
				if result.RequeueAfter <= settleTime-time.Second || result.RequeueAfter > settleTime {
					t.Errorf("requeue after %v, want about %v", result.RequeueAfter, settleTime)
				}
			} else if result.RequeueAfter != tc.wantAfter {
				t.Errorf("requeue after %v, want %v", result.RequeueAfter, tc.wantAfter)
			}
			var wantDeleted []logicalcluster.Name
			if tc.wantDeleted {
				wantDeleted = []logicalcluster.Name{x}
			}
			if !slices.Equal(tc.shard.deletedData, wantDeleted) {
				t.Errorf("deleted the content of %v, want %v", tc.shard.deletedData, wantDeleted)
			}
			var conds [][]string
			for _, w := range tc.shard.statusWrites {
				conds = append(conds, conditions(w))
			}
			if fmt.Sprint(conds) != fmt.Sprint(tc.wantConditions) {
				t.Errorf("status writes %v, want %v", conds, tc.wantConditions)
			}
			if fmt.Sprint(tc.shard.finalizerSets) != fmt.Sprint(tc.wantFinalizers) {
				t.Errorf("finalizer writes %v, want %v", tc.shard.finalizerSets, tc.wantFinalizers)
			}
			if before != nil && (!slices.Equal(before.Finalizers, tc.shard.lc.Finalizers) || len(tc.shard.lc.Status.Conditions) != len(before.Status.Conditions)) {
				t.Errorf("the cached object was changed")
			}
		})
	}
}

func TestFailureMessage(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	s := &fakeShard{lc: newLogicalCluster("x", deleted), deleteErr: errors.New("etcd is down")}
	if _, err := s.deleter().reconcile(ctx, reconciler.Key{Cluster: "x", Name: corev1alpha1.LogicalClusterName}); err == nil {
		t.Fatal("no error")
	}
	got := conditionsv1alpha1.GetMessage(s.statusWrites[0], corev1alpha1.WorkspaceDeletionContentSuccess)
	if want := "deleting the content of logical cluster x: etcd is down"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}
