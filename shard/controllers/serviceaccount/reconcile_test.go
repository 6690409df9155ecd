package serviceaccount

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestReconcile(t *testing.T) {
	now := metav1.Now()
	active := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", DeletionTimestamp: &now}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	terminatingErr := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}},
	}}
	key := reconciler.Key{Cluster: "a", Name: "ns"}

	for _, tc := range []struct {
		name      string
		namespace *corev1.Namespace
		nsErr     error
		haveSA    bool
		createErr error
		wantErr   bool
		// wantCreate is the cluster the service account is created in,
		// empty for none.
		wantCreate logicalcluster.Name
	}{
		{name: "active namespace without service account", namespace: active, wantCreate: "a"},
		{name: "active namespace with service account", namespace: active, haveSA: true},
		{name: "namespace gone", nsErr: apierrors.NewNotFound(corev1.Resource("namespace"), "ns")},
		{name: "namespace lookup fails", nsErr: errors.New("boom"), wantErr: true},
		{name: "terminating namespace", namespace: terminating},
		{name: "created meanwhile", namespace: active, createErr: apierrors.NewAlreadyExists(corev1.Resource("serviceaccounts"), "default"), wantCreate: "a"},
		{name: "namespace started terminating", namespace: active, createErr: terminatingErr, wantCreate: "a"},
		{name: "create fails", namespace: active, createErr: errors.New("boom"), wantCreate: "a", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var created []*corev1.ServiceAccount
			var createdIn logicalcluster.Name
			r := &serviceAccounts{
				getNamespace: func(cluster logicalcluster.Name, name string) (*corev1.Namespace, error) {
					if cluster != key.Cluster || name != key.Name {
						t.Errorf("getNamespace(%q, %q), want %v", cluster, name, key)
					}
					return tc.namespace, tc.nsErr
				},
				getServiceAccount: func(cluster logicalcluster.Name, namespace, name string) (*corev1.ServiceAccount, error) {
					if cluster != "a" || namespace != "ns" || name != "default" {
						t.Errorf("getServiceAccount(%q, %q, %q)", cluster, namespace, name)
					}
					if tc.haveSA {
						return &corev1.ServiceAccount{}, nil
					}
					return nil, apierrors.NewNotFound(corev1.Resource("serviceaccount"), name)
				},
				createServiceAccount: func(_ context.Context, cluster logicalcluster.Name, sa *corev1.ServiceAccount) error {
					created = append(created, sa)
					createdIn = cluster
					return tc.createErr
				},
			}
			_, err := r.Reconcile(t.Context(), key)
			if (err != nil) != tc.wantErr {
				t.Errorf("Reconcile() error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantCreate == "" {
				if len(created) > 0 {
					t.Errorf("created %v, want nothing", created)
				}
				return
			}
			if len(created) != 1 || createdIn != tc.wantCreate || created[0].Name != "default" || created[0].Namespace != "ns" {
				t.Errorf("created %v in %q, want default in ns of %q", created, createdIn, tc.wantCreate)
			}
		})
	}
}
