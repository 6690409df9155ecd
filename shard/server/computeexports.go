package server

import (
	"context"
	"fmt"
	"slices"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	kcpclient "github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/openapi/apischema"
	"github.com/tessera-dev/tessera/shard/options"
)

// kcp's transparent multi-cluster APIs are plain APIs as a service: root
// publishes the APIExports workload.kcp.io (SyncTargets) and
// scheduling.kcp.io (Locations and Placements) as kcp did, with
// APIResourceSchemas built from Tessera's Go types, identities made by the
// APIExport controller, RBAC that lets every user bind them and the
// maximal permission policy of scheduling.kcp.io (users read, but do not
// write, the status of Locations and Placements). Their objects are served
// as bound resources wherever a workspace binds them; unlike
// tenancy.kcp.io, no WorkspaceType binds them by default, so a workspace
// that does not use compute pays nothing for them (`kubectl kcp workload
// sync` and `kubectl kcp bind compute` bind them where they are needed).

// computeExport is one of root's APIExports of the compute APIs.
type computeExport struct {
	name      string
	resources []string // plural.group
	// maximalPermissionPolicy: the export has a local maximal permission
	// policy.
	maximalPermissionPolicy bool
}

var computeExports = []computeExport{
	{name: "workload.kcp.io", resources: []string{"synctargets.workload.kcp.io"}},
	{name: "scheduling.kcp.io", resources: []string{"locations.scheduling.kcp.io", "placements.scheduling.kcp.io"}, maximalPermissionPolicy: true},
}

// runComputeExports publishes the compute APIs from root in the
// background: nothing at start waits for them. It retries until it
// succeeds or ctx ends.
func (s *Server) runComputeExports(ctx context.Context, loopback *rest.Config) {
	logger := klog.FromContext(ctx).WithName("compute-exports")
	_ = wait.PollUntilContextCancel(ctx, wait.Jitter(time.Second, 0.5), true, func(ctx context.Context) (bool, error) {
		if err := ensureComputeExports(ctx, s.kcpClients.Cluster(logicalcluster.Root), loopback); err != nil {
			logger.Error(err, "Publishing the compute APIs; retrying")
			return false, nil
		}
		if slices.Contains(s.Options.BatteriesIncluded, options.BatteryRootComputeWorkspace) {
			if err := s.ensureComputeWorkspace(ctx, loopback); err != nil {
				logger.Error(err, "Setting up root:compute; retrying")
				return false, nil
			}
		}
		return true, nil
	})
}

// ensureComputeExports creates root's APIResourceSchemas, APIExports and
// RBAC of the compute APIs, or brings the exports' specs back to what they
// should be.
func ensureComputeExports(ctx context.Context, root *kcpclient.Clientset, loopback *rest.Config) error {
	schemaOf := map[string]string{}
	for _, r := range apischema.Compute() {
		sch, err := apischema.Schema(r)
		if err != nil {
			return fmt.Errorf("building the APIResourceSchema of %s.%s: %w", r.Names.Plural, r.Group, err)
		}
		if _, err := root.APIResourceSchemas().Create(ctx, sch, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating APIResourceSchema root:%s: %w", sch.Name, err)
		}
		schemaOf[r.Names.Plural+"."+r.Group] = sch.Name
	}
	for _, e := range computeExports {
		desired := &apisv1alpha1.APIExport{ObjectMeta: metav1.ObjectMeta{Name: e.name}}
		for _, gr := range e.resources {
			name, ok := schemaOf[gr]
			if !ok {
				return fmt.Errorf("no APIResourceSchema for %s of APIExport %s", gr, e.name)
			}
			desired.Spec.LatestResourceSchemas = append(desired.Spec.LatestResourceSchemas, name)
		}
		if e.maximalPermissionPolicy {
			desired.Spec.MaximalPermissionPolicy = &apisv1alpha1.MaximalPermissionPolicy{Local: &apisv1alpha1.LocalAPIExportPolicy{}}
		}
		if err := ensureExportSpec(ctx, root, desired); err != nil {
			return err
		}
	}
	cfg := rest.CopyConfig(loopback)
	cfg.Host += "/clusters/" + string(logicalcluster.Root)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	roles, bindings := computeRBAC()
	return createRBAC(ctx, kube, "root", roles, bindings)
}

// ensureExportSpec creates desired or sets its spec, keeping an identity
// the export has (the APIExport controller fills it in).
func ensureExportSpec(ctx context.Context, root *kcpclient.Clientset, desired *apisv1alpha1.APIExport) error {
	existing, err := root.APIExports().Get(ctx, desired.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = root.APIExports().Create(ctx, desired, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating APIExport root:%s: %w", desired.Name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading APIExport root:%s: %w", desired.Name, err)
	}
	want := desired.Spec.DeepCopy()
	want.Identity = existing.Spec.Identity
	if equality.Semantic.DeepEqual(existing.Spec, *want) {
		return nil
	}
	existing.Spec = *want
	if _, err := root.APIExports().Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating APIExport root:%s: %w", desired.Name, err)
	}
	return nil
}

// computeRBAC is root's RBAC for the compute exports, named as kcp names
// it: every authenticated user may bind both, and scheduling.kcp.io's
// maximal permission policy lets consumers do anything with Locations and
// Placements but only read their status. workload.kcp.io's policy role
// exists, as in kcp, though the export does not name a policy.
func computeRBAC() ([]rbacv1.ClusterRole, []rbacv1.ClusterRoleBinding) {
	all := []string{"*"}
	read := []string{"get", "list", "watch"}
	bind := func(export string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{apisv1alpha1.SchemeGroupVersion.Group}, Resources: []string{"apiexports"}, ResourceNames: []string{export}, Verbs: []string{"bind"}}
	}
	roles := []rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:apiexport:workload:bind"}, Rules: []rbacv1.PolicyRule{bind("workload.kcp.io")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:apiexport:scheduling:bind"}, Rules: []rbacv1.PolicyRule{bind("scheduling.kcp.io")}},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:apiexport:workload:maximal-permission-policy"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"workload.kcp.io"}, Resources: []string{"synctargets", "synctargets/status"}, Verbs: all}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:apiexport:scheduling:maximal-permission-policy"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"scheduling.kcp.io"}, Resources: []string{"locations", "placements"}, Verbs: all},
				{APIGroups: []string{"scheduling.kcp.io"}, Resources: []string{"locations/status", "placements/status"}, Verbs: read},
			},
		},
	}
	subject := func(name string) []rbacv1.Subject {
		return []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}}
	}
	ref := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	var bindings []rbacv1.ClusterRoleBinding
	for _, api := range []string{"workload", "scheduling"} {
		bindings = append(bindings,
			rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:authenticated:apiexport:" + api + ":bind"},
				RoleRef:    ref("system:kcp:apiexport:" + api + ":bind"), Subjects: subject("system:authenticated"),
			},
			rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "system:kcp:authenticated:apiexport:" + api + ":maximal-permission-policy"},
				RoleRef:    ref("system:kcp:apiexport:" + api + ":maximal-permission-policy"), Subjects: subject(coreBindingGroup),
			})
	}
	return roles, bindings
}

// computeWorkspace is the workspace of the root-compute-workspace battery.
const computeWorkspace = "compute"

// ensureComputeWorkspace sets up the root-compute-workspace battery as
// kcp's: the workspace root:compute (on the root shard), and in it the
// APIExport kubernetes of the workload APIs (apischema.Kubernetes), marked
// as a compute service's (extra.apis.kcp.io/compute.workload.kcp.io), with
// RBAC that lets every user bind it and its maximal permission policy
// (users may do anything with the workloads but write their status,
// which comes from the physical clusters).
func (s *Server) ensureComputeWorkspace(ctx context.Context, loopback *rest.Config) error {
	root := s.kcpClients.Cluster(logicalcluster.Root)
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: computeWorkspace},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type:     &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal", Path: string(logicalcluster.Root)},
			Location: &tenancyv1alpha1.WorkspaceLocation{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": s.Options.ShardName}}},
		},
	}
	if _, err := root.Workspaces().Create(ctx, ws, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating workspace root:%s: %w", computeWorkspace, err)
	}
	var cluster logicalcluster.Name
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := root.Workspaces().Get(ctx, computeWorkspace, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cluster = logicalcluster.Name(got.Spec.Cluster)
		return got.Status.Phase == corev1alpha1.LogicalClusterPhaseReady, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for workspace root:%s: %w", computeWorkspace, err)
	}
	kcp := s.kcpClients.Cluster(cluster)
	export := &apisv1alpha1.APIExport{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Annotations: map[string]string{workloadv1alpha1.ComputeAPIExportAnnotationKey: "true"}},
		Spec:       apisv1alpha1.APIExportSpec{MaximalPermissionPolicy: &apisv1alpha1.MaximalPermissionPolicy{Local: &apisv1alpha1.LocalAPIExportPolicy{}}},
	}
	for _, r := range apischema.Kubernetes() {
		sch, err := apischema.Schema(r)
		if err != nil {
			return fmt.Errorf("building the APIResourceSchema of %s.%s: %w", r.Names.Plural, r.Group, err)
		}
		if _, err := kcp.APIResourceSchemas().Create(ctx, sch, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating APIResourceSchema root:%s:%s: %w", computeWorkspace, sch.Name, err)
		}
		export.Spec.LatestResourceSchemas = append(export.Spec.LatestResourceSchemas, sch.Name)
	}
	existing, err := kcp.APIExports().Get(ctx, export.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := kcp.APIExports().Create(ctx, export, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating APIExport root:%s:kubernetes: %w", computeWorkspace, err)
		}
	case err != nil:
		return err
	case !equality.Semantic.DeepEqual(existing.Spec.LatestResourceSchemas, export.Spec.LatestResourceSchemas):
		// New schemas (a new release); the rest is the administrator's.
		existing.Spec.LatestResourceSchemas = export.Spec.LatestResourceSchemas
		if _, err := kcp.APIExports().Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating APIExport root:%s:kubernetes: %w", computeWorkspace, err)
		}
	}

	cfg := rest.CopyConfig(loopback)
	cfg.Host += "/clusters/" + cluster.String()
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	all, read := []string{"*"}, []string{"get", "list", "watch"}
	roles := []rbacv1.ClusterRole{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "compute:apiexport:kubernetes:bind"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{apisv1alpha1.SchemeGroupVersion.Group}, Resources: []string{"apiexports"}, ResourceNames: []string{"kubernetes"}, Verbs: []string{"bind"}}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "compute:apiexport:kubernetes:maximal-permission-policy"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"services", "endpoints", "persistentvolumeclaims"}, Verbs: all},
				{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: all},
				{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: all},
				// Volumes come up from the physical clusters (the syncer's
				// upsync); users read them.
				{APIGroups: []string{""}, Resources: []string{"services/status", "pods", "pods/status", "persistentvolumeclaims/status", "persistentvolumes", "persistentvolumes/status"}, Verbs: read},
				{APIGroups: []string{"apps"}, Resources: []string{"deployments/status"}, Verbs: read},
				{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: read},
			},
		},
	}
	ref := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	group := func(name string) []rbacv1.Subject {
		return []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: name}}
	}
	bindings := []rbacv1.ClusterRoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "compute:authenticated:apiexport:kubernetes:bind"}, RoleRef: ref("compute:apiexport:kubernetes:bind"), Subjects: group("system:authenticated")},
		{ObjectMeta: metav1.ObjectMeta{Name: "compute:authenticated:apiexport:kubernetes:maximal-permission-policy"}, RoleRef: ref("compute:apiexport:kubernetes:maximal-permission-policy"), Subjects: group(coreBindingGroup)},
	}
	return createRBAC(ctx, kube, "root:"+computeWorkspace, roles, bindings)
}
