package server

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/openapi/apischema"
)

// coreBindingGroup is the group every authenticated user's bindings act
// as under a maximal permission policy.
const coreBindingGroup = "apis.kcp.io:binding:system:authenticated"

// ensureCoreExports publishes kcp's own APIs from root as kcp does: the
// APIResourceSchemas, the APIExports tenancy.kcp.io, topology.kcp.io and
// shards.core.kcp.io (their identities are the Secrets loadCoreIdentities
// keeps), the RBAC that lets every user bind tenancy.kcp.io and
// topology.kcp.io and that is tenancy.kcp.io's maximal permission policy,
// and root's own bindings, which it waits for.
func (s *Server) ensureCoreExports(ctx context.Context, loopback *rest.Config) error {
	root := s.kcpClients.Cluster(logicalcluster.Root)
	cfg := rest.CopyConfig(loopback)
	cfg.Host += "/clusters/" + string(logicalcluster.Root)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	err = retryBootstrap(ctx, func() error {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: apisv1alpha1.IdentitySecretNamespace}}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("creating namespace root:%s: %w", apisv1alpha1.IdentitySecretNamespace, err)
	}

	schemaOf := map[string]string{} // group/resource -> schema name
	for _, r := range apischema.Core() {
		sch, err := apischema.Schema(r)
		if err != nil {
			return fmt.Errorf("building the APIResourceSchema of %s.%s: %w", r.Names.Plural, r.Group, err)
		}
		err = retryBootstrap(ctx, func() error {
			_, err := root.APIResourceSchemas().Create(ctx, sch, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("creating APIResourceSchema root:%s: %w", sch.Name, err)
		}
		schemaOf[r.Names.Plural+"."+r.Group] = sch.Name
	}

	for _, e := range coreExports {
		desired := &apisv1alpha1.APIExport{
			ObjectMeta: metav1.ObjectMeta{Name: e.name},
			Spec: apisv1alpha1.APIExportSpec{
				Identity: &apisv1alpha1.Identity{SecretRef: &corev1.SecretReference{Namespace: apisv1alpha1.IdentitySecretNamespace, Name: e.name}},
			},
		}
		for _, gr := range e.resources {
			name, ok := schemaOf[gr.Resource+"."+gr.Group]
			if !ok {
				return fmt.Errorf("no APIResourceSchema for %s of APIExport %s", gr, e.name)
			}
			desired.Spec.LatestResourceSchemas = append(desired.Spec.LatestResourceSchemas, name)
		}
		if e.maximalPermissionPolicy {
			desired.Spec.MaximalPermissionPolicy = &apisv1alpha1.MaximalPermissionPolicy{Local: &apisv1alpha1.LocalAPIExportPolicy{}}
		}
		if err := ensureExport(ctx, root, desired); err != nil {
			return err
		}
	}

	if err := ensureCoreRBAC(ctx, kube); err != nil {
		return err
	}

	for _, e := range coreExports {
		b := &apisv1alpha1.APIBinding{
			ObjectMeta: metav1.ObjectMeta{Name: e.name},
			Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
				Export: &apisv1alpha1.ExportBindingReference{Path: string(logicalcluster.Root), Name: e.name},
			}},
		}
		err := retryBootstrap(ctx, func() error {
			_, err := root.APIBindings().Create(ctx, b, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("binding APIExport root:%s in root: %w", e.name, err)
		}
	}
	// Root serves kcp's APIs whether bound or not; its discovery lists them
	// once bound, which a client expects of a ready shard.
	return wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, e := range coreExports {
			b, err := s.apiBindings.Lister().Cluster(logicalcluster.Root).Get(e.name)
			if err != nil || b.Status.Phase != apisv1alpha1.APIBindingPhaseBound {
				return false, nil
			}
		}
		return true, nil
	})
}

func ensureExport(ctx context.Context, root *kcpclient.Clientset, desired *apisv1alpha1.APIExport) error {
	err := retryBootstrap(ctx, func() error {
		existing, err := root.APIExports().Get(ctx, desired.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = root.APIExports().Create(ctx, desired, metav1.CreateOptions{})
			return err
		case err != nil:
			return err
		case equality.Semantic.DeepEqual(existing.Spec, desired.Spec):
			return nil
		}
		existing.Spec = desired.Spec
		_, err = root.APIExports().Update(ctx, existing, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("ensuring APIExport root:%s: %w", desired.Name, err)
	}
	return nil
}

// coreRBAC is root's RBAC for its exports, named as kcp names it.
func coreRBAC() ([]rbacv1.ClusterRole, []rbacv1.ClusterRoleBinding) {
	all := []string{"*"}
	read := []string{"get", "list", "watch"}
	roles := []rbacv1.ClusterRole{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:apiexport:tenancy:bind"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{apisv1alpha1.SchemeGroupVersion.Group}, Resources: []string{"apiexports"}, ResourceNames: []string{"tenancy.kcp.io"}, Verbs: []string{"bind"}}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:apiexport:topology:bind"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{apisv1alpha1.SchemeGroupVersion.Group}, Resources: []string{"apiexports"}, ResourceNames: []string{"topology.kcp.io"}, Verbs: []string{"bind"}}},
		},
		{
			// The seed's example: consumers may do anything with
			// Workspaces and WorkspaceTypes, and only read their status.
			ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:apiexport:tenancy:maximal-permission-policy"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspaces", "workspacetypes"}, Verbs: all},
				{APIGroups: []string{"tenancy.kcp.io"}, Resources: []string{"workspaces/status", "workspacetypes/status"}, Verbs: read},
			},
		},
	}
	subject := func(kind, name string) []rbacv1.Subject {
		return []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}}
	}
	ref := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	bindings := []rbacv1.ClusterRoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:authenticated:apiexport:tenancy:bind"}, RoleRef: ref("system:kcp:apiexport:tenancy:bind"), Subjects: subject(rbacv1.GroupKind, "system:authenticated")},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:authenticated:apiexport:topology:bind"}, RoleRef: ref("system:kcp:apiexport:topology:bind"), Subjects: subject(rbacv1.GroupKind, "system:authenticated")},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:authenticated:apiexport:tenancy:maximal-permission-policy"}, RoleRef: ref("system:kcp:apiexport:tenancy:maximal-permission-policy"), Subjects: subject(rbacv1.GroupKind, coreBindingGroup)},
	}
	return roles, bindings
}

// ensureCoreRBAC creates root's RBAC for its exports when missing. It
// leaves existing objects alone: an administrator may narrow the maximal
// permission policy.
func ensureCoreRBAC(ctx context.Context, kube kubernetes.Interface) error {
	roles, bindings := coreRBAC()
	return retryBootstrap(ctx, func() error { return createRBAC(ctx, kube, "root", roles, bindings) })
}

// createRBAC creates the ClusterRoles and ClusterRoleBindings of the
// workspace at path (for errors) that are missing, leaving existing ones
// alone.
func createRBAC(ctx context.Context, kube kubernetes.Interface, path string, roles []rbacv1.ClusterRole, bindings []rbacv1.ClusterRoleBinding) error {
	for i := range roles {
		if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &roles[i], metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterRole %s:%s: %w", path, roles[i].Name, err)
		}
	}
	for i := range bindings {
		if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &bindings[i], metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterRoleBinding %s:%s: %w", path, bindings[i].Name, err)
		}
	}
	return nil
}
