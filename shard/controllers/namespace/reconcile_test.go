package namespace

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestReconcile(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	deletedAt := metav1.NewTime(now.Add(-20 * time.Second))
	namespace := func(deleting bool, finalizers ...corev1.FinalizerName) *corev1.Namespace {
		ns := &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: "ns", UID: "ns-uid", ResourceVersion: "1"},
			Spec:       corev1.NamespaceSpec{Finalizers: finalizers},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
		}
		if deleting {
			ns.DeletionTimestamp = &deletedAt
			ns.Status.Phase = corev1.NamespaceTerminating
		}
		return ns
	}
	terminating := namespace(true, corev1.FinalizerKubernetes, "example.com/other")
	configmaps := resource{GroupVersionResource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, deleteCollection: true}
	widgets := resource{GroupVersionResource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}}

	for _, tc := range []struct {
		name      string
		cached    *corev1.Namespace
		live      *corev1.Namespace
		resources []resource
		discErr   *discoveryError
		content   objects
		deleteErr error
		finalErr  error

		wantErr       bool
		wantRequeue   time.Duration
		wantFinalize  bool
		wantStatus    bool
		wantCondition corev1.NamespaceConditionType // expected True, if set
		wantLeft      int
	}{
		{name: "namespace not cached"},
		{name: "active namespace", cached: namespace(false, corev1.FinalizerKubernetes), live: namespace(false, corev1.FinalizerKubernetes)},
		{name: "terminating without our finalizer", cached: namespace(true, "example.com/other"), live: namespace(true, "example.com/other")},
		{name: "gone from the server", cached: terminating},
		{
			name: "cache is stale: live namespace is not terminating", cached: terminating, live: namespace(false, corev1.FinalizerKubernetes),
			content: objects{"a": object("a")}, wantLeft: 1,
		},
		{
			name: "empties and finalizes", cached: terminating, live: terminating,
			resources: []resource{configmaps, widgets}, content: objects{"a": object("a"), "b": object("b")},
			wantFinalize: true, wantStatus: true,
		},
		{
			name: "empty namespace is finalized", cached: terminating, live: terminating,
			resources: []resource{configmaps}, wantFinalize: true, wantStatus: true,
		},
		{
			name: "waits for objects with finalizers", cached: terminating, live: terminating,
			resources: []resource{configmaps}, content: objects{"a": object("a", "example.com/keep")},
			wantRequeue: 5 * time.Second, wantStatus: true, wantCondition: corev1.NamespaceFinalizersRemaining, wantLeft: 1,
		},
		{
			name: "partial discovery deletes what it found but does not finalize", cached: terminating, live: terminating,
			resources: []resource{configmaps}, discErr: &discoveryError{discovery: errors.New("example.com/v1: 503")},
			content: objects{"a": object("a")},
			wantErr: true, wantStatus: true, wantCondition: corev1.NamespaceDeletionDiscoveryFailure,
		},
		{
			name: "failed discovery", cached: terminating, live: terminating,
			discErr: &discoveryError{discovery: errors.New("connection refused")},
			wantErr: true, wantStatus: true, wantCondition: corev1.NamespaceDeletionDiscoveryFailure,
		},
		{
			name: "content deletion fails", cached: terminating, live: terminating,
			resources: []resource{widgets}, content: objects{"a": object("a")}, deleteErr: errors.New("denied"),
			wantErr: true, wantStatus: true, wantCondition: corev1.NamespaceDeletionContentFailure, wantLeft: 1,
		},
		{
			name: "finalize conflicts", cached: terminating, live: terminating,
			resources: []resource{configmaps}, finalErr: apierrors.NewConflict(corev1.Resource("namespaces"), "ns", errors.New("changed")),
			wantErr: true, wantFinalize: true, wantStatus: true,
		},
		{
			name: "finalize finds it gone", cached: terminating, live: terminating,
			resources: []resource{configmaps}, finalErr: apierrors.NewNotFound(corev1.Resource("namespaces"), "ns"),
			wantFinalize: true, wantStatus: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				finalized []corev1.FinalizerName
				finalizes int
				statuses  []*corev1.Namespace
				c         = &calls{}
			)
			if tc.content == nil {
				tc.content = objects{}
			}
			r := &namespaces{
				getNamespace: func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
					if tc.cached == nil {
						return nil, apierrors.NewNotFound(corev1.Resource("namespace"), name)
					}
					return tc.cached, nil
				},
				getLiveNamespace: func(_ context.Context, cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
					if cluster != "a" || name != "ns" {
						t.Errorf("getLiveNamespace(%q, %q)", cluster, name)
					}
					if tc.live == nil {
						return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
					}
					return tc.live.DeepCopy(), nil
				},
				discover: func(_ context.Context, cluster logicalcluster.Name) ([]resource, *discoveryError) {
					return tc.resources, tc.discErr
				},
				content: fakeContent(t, tc.content, c, nil, nil, tc.deleteErr),
				updateStatus: func(_ context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) (*corev1.Namespace, error) {
					statuses = append(statuses, ns)
					out := ns.DeepCopy()
					out.ResourceVersion = "2"
					return out, nil
				},
				finalize: func(_ context.Context, cluster logicalcluster.Name, ns *corev1.Namespace) (*corev1.Namespace, error) {
					finalizes++
					if ns.ResourceVersion != "2" {
						t.Errorf("finalize with resourceVersion %q, want the one the status update returned", ns.ResourceVersion)
					}
					finalized = ns.Spec.Finalizers
					return ns, tc.finalErr
				},
				now: func() time.Time { return now },
			}
			res, err := r.Reconcile(t.Context(), reconciler.Key{Cluster: "a", Name: "ns"})
			if (err != nil) != tc.wantErr {
				t.Errorf("Reconcile() error = %v, want error %v", err, tc.wantErr)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, tc.wantRequeue)
			}
			if (finalizes > 0) != tc.wantFinalize {
				t.Errorf("finalize calls = %d, want %v", finalizes, tc.wantFinalize)
			}
			if tc.wantFinalize && !slices.Equal(finalized, []corev1.FinalizerName{"example.com/other"}) {
				t.Errorf("finalized with %v, want only the other finalizer kept", finalized)
			}
			if (len(statuses) > 0) != tc.wantStatus {
				t.Errorf("status updates = %d, want %v", len(statuses), tc.wantStatus)
			}
			if tc.wantCondition != "" && len(statuses) > 0 {
				cond := conditionOf(statuses[len(statuses)-1].Status.Conditions, tc.wantCondition)
				if cond == nil || cond.Status != corev1.ConditionTrue {
					t.Errorf("condition %s = %+v, want True", tc.wantCondition, cond)
				}
			}
			if len(tc.content) != tc.wantLeft {
				t.Errorf("objects left = %d (%v), want %d", len(tc.content), tc.content, tc.wantLeft)
			}
		})
	}
}
