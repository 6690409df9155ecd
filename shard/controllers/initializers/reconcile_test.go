package initializers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

func TestOwnerBinding(t *testing.T) {
	crb, err := ownerBinding(`{"username":"alice","groups":["team"]}`)
	if err != nil {
		t.Fatal(err)
	}
	want := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "workspace-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: "alice"}},
	}
	if diff := cmp.Diff(want, crb); diff != "" {
		t.Errorf("binding (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`not json`, `{"groups":["x"]}`} {
		if _, err := ownerBinding(bad); err == nil {
			t.Errorf("ownerBinding(%q) succeeded", bad)
		}
	}
}

func TestStatusURL(t *testing.T) {
	lc := &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{logicalcluster.PathAnnotationKey: "root:org"}}}
	if got := statusURL("https://proxy:443/", "abc", lc); got != "https://proxy:443/clusters/root:org" {
		t.Errorf("with path: %q", got)
	}
	if got := statusURL("https://proxy:443", "abc", &corev1alpha1.LogicalCluster{}); got != "https://proxy:443/clusters/abc" {
		t.Errorf("without path: %q", got)
	}
	if got := statusURL("https://proxy:443", "system:admin", &corev1alpha1.LogicalCluster{}); got != "" {
		t.Errorf("system cluster: %q", got)
	}
	lc.Status.URL = "https://elsewhere/clusters/x"
	if got := statusURL("https://proxy:443", "abc", lc); got != "https://proxy:443/clusters/root:org" {
		t.Errorf("another URL set already: %q, want it corrected", got)
	}
	if got := statusURL("", "abc", lc); got != "" {
		t.Errorf("without an external URL: %q", got)
	}
}

// fake records what the initializer does.
type fake struct {
	lc        *corev1alpha1.LogicalCluster
	fresh     *corev1alpha1.LogicalCluster
	conflicts int
	// crbErr, if set, is returned by every create of a binding.
	crbErr error
	// binding is the workspace-admin binding on the "server", if any.
	binding *rbacv1.ClusterRoleBinding
	// getErr, if set, is returned by every read of a binding.
	getErr error

	written *corev1alpha1.LogicalCluster
	// crbs are the bindings the initializer tried to create.
	crbs            []*rbacv1.ClusterRoleBinding
	updates, delete int
	nss             []string
}

func (f *fake) initializer() *initializer {
	return &initializer{
		externalURL: "https://proxy",
		getLogicalCluster: func(cluster logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			if f.lc == nil || cluster != "abc" {
				return nil, apierrors.NewNotFound(corev1alpha1.Resource("logicalclusters"), "cluster")
			}
			return f.lc, nil
		},
		readLogicalCluster: func(context.Context, logicalcluster.Name) (*corev1alpha1.LogicalCluster, error) {
			return f.fresh.DeepCopy(), nil
		},
		updateStatus: func(_ context.Context, _ logicalcluster.Name, lc *corev1alpha1.LogicalCluster) error {
			if f.conflicts > 0 {
				f.conflicts--
				return apierrors.NewConflict(corev1alpha1.Resource("logicalclusters"), "cluster", errors.New("modified"))
			}
			f.written = lc
			return nil
		},
		createClusterRoleBinding: func(_ context.Context, _ logicalcluster.Name, crb *rbacv1.ClusterRoleBinding) error {
			f.crbs = append(f.crbs, crb)
			switch {
			case f.crbErr != nil:
				return f.crbErr
			case f.binding != nil:
				return apierrors.NewAlreadyExists(rbacv1.Resource("clusterrolebindings"), crb.Name)
			}
			f.binding = crb.DeepCopy()
			f.binding.UID = types.UID(fmt.Sprintf("crb-%d", len(f.crbs)))
			return nil
		},
		getClusterRoleBinding: func(_ context.Context, _ logicalcluster.Name, name string) (*rbacv1.ClusterRoleBinding, error) {
			switch {
			case f.getErr != nil:
				return nil, f.getErr
			case f.binding == nil || f.binding.Name != name:
				return nil, apierrors.NewNotFound(rbacv1.Resource("clusterrolebindings"), name)
			}
			return f.binding.DeepCopy(), nil
		},
		updateClusterRoleBinding: func(_ context.Context, _ logicalcluster.Name, crb *rbacv1.ClusterRoleBinding) error {
			if f.binding == nil || f.binding.UID != crb.UID || f.binding.RoleRef != crb.RoleRef {
				return apierrors.NewConflict(rbacv1.Resource("clusterrolebindings"), crb.Name, errors.New("modified"))
			}
			f.updates++
			f.binding = crb.DeepCopy()
			return nil
		},
		deleteClusterRoleBinding: func(_ context.Context, _ logicalcluster.Name, name string, uid types.UID) error {
			if f.binding == nil {
				return apierrors.NewNotFound(rbacv1.Resource("clusterrolebindings"), name)
			}
			if f.binding.UID != uid {
				return apierrors.NewConflict(rbacv1.Resource("clusterrolebindings"), name, errors.New("UID precondition failed"))
			}
			f.delete++
			f.binding = nil
			return nil
		},
		createNamespace: func(_ context.Context, _ logicalcluster.Name, ns *corev1.Namespace) error {
			f.nss = append(f.nss, ns.Name)
			return nil
		},
	}
}

func newLC(owner bool, initializers ...corev1alpha1.LogicalClusterInitializer) *corev1alpha1.LogicalCluster {
	lc := &corev1alpha1.LogicalCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster", UID: "lc-1", Annotations: map[string]string{logicalcluster.PathAnnotationKey: "root:org:team"}},
		Status: corev1alpha1.LogicalClusterStatus{
			Phase:        corev1alpha1.LogicalClusterPhaseInitializing,
			Initializers: initializers,
		},
	}
	if owner {
		lc.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] = `{"username":"alice"}`
	}
	return lc
}

func TestReconcile(t *testing.T) {
	deleting := newLC(true, "system:owner")
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name      string
		lc        *corev1alpha1.LogicalCluster
		crbErr    error
		binding   *rbacv1.ClusterRoleBinding
		getErr    error
		wantCRBs  int
		wantNSs   []string
		wantLeft  []corev1alpha1.LogicalClusterInitializer
		wantWrite bool
		wantErr   bool
	}{
		{name: "owner and universal", lc: newLC(true, "system:owner", "root:universal", "root:custom"),
			wantCRBs: 1, wantNSs: []string{"default"}, wantLeft: []corev1alpha1.LogicalClusterInitializer{"root:custom"}, wantWrite: true},
		{name: "owner binding exists already", lc: newLC(true, "system:owner"),
			binding: adminBinding("cluster-admin", "alice"), wantCRBs: 1, wantWrite: true},
		{name: "reading the existing binding fails", lc: newLC(true, "system:owner"),
			binding: adminBinding("view", "alice"), getErr: errors.New("boom"), wantCRBs: 1, wantErr: true,
			wantLeft: []corev1alpha1.LogicalClusterInitializer{"system:owner"}, wantWrite: true},
		{name: "owner initializer without owner", lc: newLC(false, "system:owner"), wantWrite: true},
		// A failing initializer keeps its place, but holds back neither the
		// others nor status.URL.
		{name: "binding fails", lc: newLC(true, "system:owner", "root:universal"), crbErr: errors.New("boom"), wantCRBs: 1, wantErr: true,
			wantNSs: []string{"default"}, wantLeft: []corev1alpha1.LogicalClusterInitializer{"system:owner"}, wantWrite: true},
		{name: "only the URL", lc: newLC(false), wantWrite: true},
		{name: "other initializers only", lc: func() *corev1alpha1.LogicalCluster {
			lc := newLC(false, "root:custom")
			lc.Status.URL = "https://proxy/clusters/root:org:team"
			return lc
		}()},
		{name: "another URL is corrected", lc: func() *corev1alpha1.LogicalCluster {
			lc := newLC(false, "root:custom")
			lc.Status.URL = "https://evil.example.com/clusters/root:org:team"
			return lc
		}(), wantLeft: []corev1alpha1.LogicalClusterInitializer{"root:custom"}, wantWrite: true},
		{name: "deleting", lc: deleting},
		{name: "gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{lc: tc.lc, crbErr: tc.crbErr, binding: tc.binding, getErr: tc.getErr}
			_, ctx := ktesting.NewTestContext(t)
			_, err := f.initializer().reconcile(ctx, reconciler.Key{Cluster: "abc"})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			if len(f.crbs) != tc.wantCRBs || !cmp.Equal(f.nss, tc.wantNSs) {
				t.Errorf("created %d bindings and namespaces %v", len(f.crbs), f.nss)
			}
			if (f.written != nil) != tc.wantWrite {
				t.Fatalf("written = %v, want a write %v", f.written != nil, tc.wantWrite)
			}
			if f.written == nil {
				return
			}
			if !cmp.Equal(f.written.Status.Initializers, tc.wantLeft, cmpopts.EquateEmpty()) {
				t.Errorf("initializers left = %v, want %v", f.written.Status.Initializers, tc.wantLeft)
			}
			if f.written.Status.URL != "https://proxy/clusters/root:org:team" {
				t.Errorf("status.URL = %q", f.written.Status.URL)
			}
			if len(tc.lc.Status.Initializers) > 0 && len(f.lc.Status.Initializers) != len(tc.lc.Status.Initializers) {
				t.Errorf("the cached object was changed")
			}
		})
	}
}

func TestReconcileConflict(t *testing.T) {
	// The cache is behind: the server has lost root:universal already and
	// has a URL; only system:owner is left to remove.
	fresh := newLC(true, "system:owner", "root:custom")
	fresh.Status.URL = "https://other/clusters/root:org:team"
	f := &fake{lc: newLC(true, "system:owner", "root:universal", "root:custom"), fresh: fresh, conflicts: 1}
	_, ctx := ktesting.NewTestContext(t)
	if _, err := f.initializer().reconcile(ctx, reconciler.Key{Cluster: "abc"}); err != nil {
		t.Fatal(err)
	}
	// A URL written meanwhile by someone else is corrected as well.
	if f.written == nil || !cmp.Equal(f.written.Status.Initializers, []corev1alpha1.LogicalClusterInitializer{"root:custom"}) ||
		f.written.Status.URL != "https://proxy/clusters/root:org:team" {
		t.Errorf("written after conflict: %+v", f.written)
	}
}

func TestNeedsWork(t *testing.T) {
	withURL := func(lc *corev1alpha1.LogicalCluster) *corev1alpha1.LogicalCluster {
		lc.Status.URL = "https://x"
		return lc
	}
	deleting := newLC(true, "system:owner")
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name string
		lc   *corev1alpha1.LogicalCluster
		want bool
	}{
		{"owner", withURL(newLC(true, "system:owner")), true},
		{"universal", withURL(newLC(false, "root:universal")), true},
		{"no URL", newLC(false), true},
		{"others only", withURL(newLC(false, "root:custom")), true},
		{"others only, right URL", func() *corev1alpha1.LogicalCluster {
			lc := newLC(false, "root:custom")
			lc.Status.URL = "https://proxy/clusters/root:org:team"
			return lc
		}(), false},
		{"deleting", deleting, false},
	} {
		if got := needsWork(tc.lc, "abc", "https://proxy"); got != tc.want {
			t.Errorf("%s: needsWork = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func adminBinding(role string, users ...string) *rbacv1.ClusterRoleBinding {
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "workspace-admin", UID: "crb-existing"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
	}
	for _, u := range users {
		crb.Subjects = append(crb.Subjects, rbacv1.Subject{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: u})
	}
	return crb
}

// TestBindOwnerChecksExistingBinding: a workspace-admin binding somebody
// else created first must end up binding cluster-admin to the owner.
func TestBindOwnerChecksExistingBinding(t *testing.T) {
	for _, tc := range []struct {
		name        string
		binding     *rbacv1.ClusterRoleBinding
		wantSubject []string
		wantUpdates int
		wantDeletes int
	}{
		{name: "none", wantSubject: []string{"alice"}},
		{name: "right role and owner", binding: adminBinding("cluster-admin", "bob", "alice"), wantSubject: []string{"bob", "alice"}},
		{name: "owner missing", binding: adminBinding("cluster-admin", "bob"), wantSubject: []string{"bob", "alice"}, wantUpdates: 1},
		{name: "no subjects", binding: adminBinding("cluster-admin"), wantSubject: []string{"alice"}, wantUpdates: 1},
		{name: "another role", binding: adminBinding("view", "alice"), wantSubject: []string{"alice"}, wantDeletes: 1},
		{name: "a Role of that name", binding: func() *rbacv1.ClusterRoleBinding {
			crb := adminBinding("cluster-admin", "mallory")
			crb.RoleRef.Kind = "Role"
			return crb
		}(), wantSubject: []string{"alice"}, wantDeletes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{lc: newLC(true, "system:owner"), binding: tc.binding}
			_, ctx := ktesting.NewTestContext(t)
			if _, err := f.initializer().reconcile(ctx, reconciler.Key{Cluster: "abc"}); err != nil {
				t.Fatal(err)
			}
			if f.binding == nil {
				t.Fatalf("no binding")
			}
			if want := (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"}); f.binding.RoleRef != want {
				t.Errorf("roleRef = %+v, want %+v", f.binding.RoleRef, want)
			}
			var subjects []string
			for _, s := range f.binding.Subjects {
				if s.Kind != "User" || s.APIGroup != "rbac.authorization.k8s.io" {
					t.Errorf("subject %+v", s)
				}
				subjects = append(subjects, s.Name)
			}
			if !cmp.Equal(subjects, tc.wantSubject) {
				t.Errorf("subjects = %v, want %v", subjects, tc.wantSubject)
			}
			if f.updates != tc.wantUpdates || f.delete != tc.wantDeletes {
				t.Errorf("%d updates and %d deletes, want %d and %d", f.updates, f.delete, tc.wantUpdates, tc.wantDeletes)
			}
			if f.written == nil || len(f.written.Status.Initializers) != 0 {
				t.Errorf("system:owner not removed: %+v", f.written)
			}
		})
	}
}
