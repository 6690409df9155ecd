package serviceaccounttokens

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestReconcile(t *testing.T) {
	key := reconciler.Key{Cluster: "a", Namespace: "ns", Name: "robot-token"}
	rootCA := []byte("CA")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "sa-uid"}}
	secret := func(mutate ...func(*corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "ns", UID: "secret-uid",
				Annotations: map[string]string{corev1.ServiceAccountNameKey: "robot"}},
			Type: corev1.SecretTypeServiceAccountToken,
		}
		for _, m := range mutate {
			m(s)
		}
		return s
	}
	complete := func(s *corev1.Secret) {
		s.Annotations[corev1.ServiceAccountUIDKey] = "sa-uid"
		s.Data = map[string][]byte{"token": []byte("old-token"), "ca.crt": rootCA, "namespace": []byte("ns")}
	}
	now := metav1.Now()

	for _, tc := range []struct {
		name      string
		secret    *corev1.Secret
		secretErr error
		sa        *corev1.ServiceAccount
		saErr     error
		updateErr error
		deleteErr error
		// wantUpdate is the secret written, nil for none.
		wantUpdate *corev1.Secret
		wantDelete bool
		wantErr    bool
		// wantUID is the UID the service account is looked up with.
		wantUID types.UID
	}{
		{
			name: "new token secret is filled", secret: secret(), sa: sa,
			wantUpdate: secret(func(s *corev1.Secret) {
				s.Annotations[corev1.ServiceAccountUIDKey] = "sa-uid"
				s.Data = map[string][]byte{"token": []byte("token:a/ns/robot/robot-token"), "ca.crt": rootCA, "namespace": []byte("ns")}
			}),
		},
		{name: "complete secret is left alone", secret: secret(complete), sa: sa, wantUID: "sa-uid"},
		{
			name: "a changed CA is written, the token kept", secret: secret(complete, func(s *corev1.Secret) { s.Data["ca.crt"] = []byte("old CA") }), sa: sa, wantUID: "sa-uid",
			wantUpdate: secret(complete),
		},
		{name: "secret gone", secretErr: apierrors.NewNotFound(corev1.Resource("secret"), "robot-token")},
		{name: "cache fails", secretErr: errors.New("boom"), wantErr: true},
		{name: "other secret type", secret: secret(func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque })},
		{name: "secret being deleted", secret: secret(func(s *corev1.Secret) { s.DeletionTimestamp = &now })},
		{name: "no service account name", secret: secret(func(s *corev1.Secret) { delete(s.Annotations, corev1.ServiceAccountNameKey) })},
		{name: "missing service account deletes the secret", secret: secret(), saErr: apierrors.NewNotFound(corev1.Resource("serviceaccount"), "robot"), wantDelete: true},
		{
			name: "service account recreated with another UID deletes the secret", sa: sa, wantUID: "old-uid", wantDelete: true,
			secret: secret(complete, func(s *corev1.Secret) { s.Annotations[corev1.ServiceAccountUIDKey] = "old-uid" }),
		},
		{
			name: "secret replaced meanwhile", secret: secret(), saErr: apierrors.NewNotFound(corev1.Resource("serviceaccount"), "robot"),
			deleteErr: apierrors.NewConflict(corev1.Resource("secrets"), "robot-token", errors.New("uid")), wantDelete: true,
		},
		{name: "delete fails", secret: secret(), saErr: apierrors.NewNotFound(corev1.Resource("serviceaccount"), "robot"), deleteErr: errors.New("boom"), wantDelete: true, wantErr: true},
		{name: "service account lookup fails", secret: secret(), saErr: errors.New("boom"), wantErr: true},
		{name: "service account being deleted", secret: secret(), sa: &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "sa-uid", DeletionTimestamp: &now}}},
		{
			name: "update conflict is retried", secret: secret(), sa: sa, updateErr: apierrors.NewConflict(corev1.Resource("secrets"), "robot-token", errors.New("changed")), wantErr: true,
			wantUpdate: secret(func(s *corev1.Secret) {
				s.Annotations[corev1.ServiceAccountUIDKey] = "sa-uid"
				s.Data = map[string][]byte{"token": []byte("token:a/ns/robot/robot-token"), "ca.crt": rootCA, "namespace": []byte("ns")}
			}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var updated *corev1.Secret
			var deleted bool
			r := &tokens{
				getSecret: func(cluster logicalcluster.Name, namespace, name string) (*corev1.Secret, error) {
					if cluster != key.Cluster || namespace != key.Namespace || name != key.Name {
						t.Errorf("getSecret(%q, %q, %q), want %v", cluster, namespace, name, key)
					}
					return tc.secret, tc.secretErr
				},
				getServiceAccount: func(_ context.Context, cluster logicalcluster.Name, namespace, name string, uid types.UID) (*corev1.ServiceAccount, error) {
					if cluster != "a" || namespace != "ns" || name != "robot" || uid != tc.wantUID {
						t.Errorf("getServiceAccount(%q, %q, %q, %q)", cluster, namespace, name, uid)
					}
					return tc.sa, tc.saErr
				},
				issue: func(cluster logicalcluster.Name, sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error) {
					return "token:" + string(cluster) + "/" + sa.Namespace + "/" + sa.Name + "/" + secret.Name, nil
				},
				updateSecret: func(_ context.Context, cluster logicalcluster.Name, s *corev1.Secret) error {
					if cluster != "a" {
						t.Errorf("update in cluster %q", cluster)
					}
					updated = s
					return tc.updateErr
				},
				deleteSecret: func(_ context.Context, cluster logicalcluster.Name, namespace, name string, uid types.UID) error {
					if cluster != "a" || namespace != "ns" || name != "robot-token" || uid != "secret-uid" {
						t.Errorf("deleteSecret(%q, %q, %q, %q)", cluster, namespace, name, uid)
					}
					deleted = true
					return tc.deleteErr
				},
				rootCA: rootCA,
			}
			var before *corev1.Secret
			if tc.secret != nil {
				before = tc.secret.DeepCopy()
			}
			_, err := r.Reconcile(t.Context(), key)
			if (err != nil) != tc.wantErr {
				t.Errorf("Reconcile() error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantUpdate, updated); diff != "" {
				t.Errorf("updated secret (-want +got):\n%s", diff)
			}
			if deleted != tc.wantDelete {
				t.Errorf("deleted %v, want %v", deleted, tc.wantDelete)
			}
			if diff := cmp.Diff(before, tc.secret); diff != "" {
				t.Errorf("the cached secret was changed (-before +after):\n%s", diff)
			}
		})
	}
}
