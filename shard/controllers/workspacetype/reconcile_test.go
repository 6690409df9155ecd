package workspacetype

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2/ktesting"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/third_party/conditions/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func shard(name, baseURL, vwURL string) *corev1alpha1.Shard {
	return &corev1alpha1.Shard{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1alpha1.ShardSpec{BaseURL: baseURL, VirtualWorkspaceURL: vwURL},
	}
}

func TestVirtualWorkspaces(t *testing.T) {
	shards := []*corev1alpha1.Shard{
		shard("s2", "https://s2:6443", ""),
		shard("root", "https://root:6443", "https://vw.example.com/"),
		shard("s1", "https://s1:6443", "https://vw.example.com"), // same URL as root: listed once
	}
	got := virtualWorkspaces("root:universal", shards)
	want := []tenancyv1alpha1.VirtualWorkspace{
		{URL: "https://s2:6443/services/initializingworkspaces/root:universal"},
		{URL: "https://vw.example.com/services/initializingworkspaces/root:universal"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("virtual workspaces (-want +got):\n%s", diff)
	}
	if got := virtualWorkspaces("root:universal", nil); got != nil {
		t.Errorf("without shards: %v", got)
	}
}

func TestReconcile(t *testing.T) {
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: "custom", Annotations: map[string]string{logicalcluster.AnnotationKey: "orgcluster"}}}
	for _, tc := range []struct {
		name      string
		shards    []*corev1alpha1.Shard
		existing  func(*tenancyv1alpha1.WorkspaceType)
		updateErr error
		wantWrite bool
		wantReady bool
		wantURLs  int
		wantRes   reconciler.Result
		wantErr   bool
	}{
		{name: "new type", shards: []*corev1alpha1.Shard{shard("root", "https://root", ""), shard("s1", "https://s1", "")},
			wantWrite: true, wantReady: true, wantURLs: 2},
		{name: "up to date", shards: []*corev1alpha1.Shard{shard("root", "https://root", "")},
			existing: func(wt *tenancyv1alpha1.WorkspaceType) {
				setStatus(wt, "orgcluster", []*corev1alpha1.Shard{shard("root", "https://root", "")})
			}, wantReady: true, wantURLs: 1},
		{name: "shard removed", shards: []*corev1alpha1.Shard{shard("root", "https://root", "")},
			existing: func(wt *tenancyv1alpha1.WorkspaceType) {
				setStatus(wt, "orgcluster", []*corev1alpha1.Shard{shard("root", "https://root", ""), shard("s1", "https://s1", "")})
			}, wantWrite: true, wantReady: true, wantURLs: 1},
		{name: "no shards", wantWrite: true},
		{name: "conflict", shards: []*corev1alpha1.Shard{shard("root", "https://root", "")}, wantWrite: true, wantReady: true, wantURLs: 1,
			updateErr: apierrors.NewConflict(tenancyv1alpha1.Resource("workspacetypes"), "custom", errors.New("modified")), wantRes: reconciler.Result{RequeueAfter: conflictRetry}},
		{name: "error", shards: []*corev1alpha1.Shard{shard("root", "https://root", "")}, wantWrite: true, wantReady: true, wantURLs: 1,
			updateErr: errors.New("boom"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cached := wt.DeepCopy()
			if tc.existing != nil {
				tc.existing(cached)
			}
			var written *tenancyv1alpha1.WorkspaceType
			r := &statusReconciler{
				getType: func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.WorkspaceType, error) {
					if cluster != "orgcluster" || name != "custom" {
						return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspacetypes"), name)
					}
					return cached, nil
				},
				listShards: func() ([]*corev1alpha1.Shard, error) { return tc.shards, nil },
				updateStatus: func(_ context.Context, cluster logicalcluster.Name, wt *tenancyv1alpha1.WorkspaceType) error {
					written = wt
					return tc.updateErr
				},
			}
			_, ctx := ktesting.NewTestContext(t)
			res, err := r.reconcile(ctx, reconciler.Key{Cluster: "orgcluster", Name: "custom"})
			if (err != nil) != tc.wantErr || res != tc.wantRes {
				t.Fatalf("reconcile = %+v, %v", res, err)
			}
			if (written != nil) != tc.wantWrite {
				t.Fatalf("written = %v, want a write: %v", written != nil, tc.wantWrite)
			}
			if written == nil {
				return
			}
			if conditionsv1alpha1.IsTrue(written, tenancyv1alpha1.WorkspaceTypeReady) != tc.wantReady {
				t.Errorf("conditions = %+v", written.Status.Conditions)
			}
			if len(written.Status.VirtualWorkspaces) != tc.wantURLs {
				t.Errorf("virtual workspaces = %+v", written.Status.VirtualWorkspaces)
			}
			for _, vw := range written.Status.VirtualWorkspaces {
				if want := "/services/initializingworkspaces/orgcluster:custom"; len(vw.URL) < len(want) || vw.URL[len(vw.URL)-len(want):] != want {
					t.Errorf("URL %q does not end in %s", vw.URL, want)
				}
			}
			if cached.Status.VirtualWorkspaces != nil && tc.existing == nil {
				t.Errorf("the cached object was changed")
			}
		})
	}

	// A deleted type is skipped.
	r := &statusReconciler{getType: func(logicalcluster.Name, string) (*tenancyv1alpha1.WorkspaceType, error) {
		return nil, apierrors.NewNotFound(tenancyv1alpha1.Resource("workspacetypes"), "x")
	}}
	if _, err := r.reconcile(t.Context(), reconciler.Key{Cluster: "c", Name: "x"}); err != nil {
		t.Errorf("reconcile of a deleted type: %v", err)
	}
}

func TestTypesForShard(t *testing.T) {
	all := []*tenancyv1alpha1.WorkspaceType{
		{ObjectMeta: metav1.ObjectMeta{Name: "universal", Annotations: map[string]string{logicalcluster.AnnotationKey: "root"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "custom", Annotations: map[string]string{logicalcluster.AnnotationKey: "orgcluster"}}},
	}
	list := func() ([]*tenancyv1alpha1.WorkspaceType, error) { return all, nil }
	inCluster := func(cluster string) *corev1alpha1.Shard {
		s := shard("s1", "https://s1", "")
		s.Annotations = map[string]string{logicalcluster.AnnotationKey: cluster}
		return s
	}
	want := []reconciler.Key{{Cluster: "root", Name: "universal"}, {Cluster: "orgcluster", Name: "custom"}}
	if got := typesForShard(inCluster("root"), list); !cmp.Equal(got, want) {
		t.Errorf("for a Shard of root: %v, want %v", got, want)
	}
	for _, cluster := range []string{"orgcluster", "system:admin", ""} {
		if got := typesForShard(inCluster(cluster), list); len(got) != 0 {
			t.Errorf("a Shard in %q enqueued %v", cluster, got)
		}
	}
}
