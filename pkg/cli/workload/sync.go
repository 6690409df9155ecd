package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	workloadv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/workload/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/cli/plugin"
	"github.com/tessera-dev/tessera/pkg/cli/workspace"
	"github.com/tessera-dev/tessera/pkg/client/kcp"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

const (
	// syncerIDPrefix starts the names of a syncer's objects.
	syncerIDPrefix = "kcp-syncer-"
	// maxSyncTargetNameLength is kcp's limit, which leaves room for the
	// prefix and the hash in a DNS subdomain.
	maxSyncTargetNameLength = validation.DNS1123SubdomainMaxLength - (9 + len(syncerIDPrefix))
)

var syncTargetsGVR = workloadv1alpha1.SchemeGroupVersion.WithResource("synctargets")
var locationsGVR = schedulingv1alpha1.SchemeGroupVersion.WithResource("locations")

// syncOptions are the options of "kubectl kcp workload sync".
type syncOptions struct {
	client workspace.ClientFlags
	// resources are the --resources to sync, <resource>.<group>.
	resources []string
	// apiExports are the exports the SyncTarget supports,
	// [<workspace path>:]<name>.
	apiExports []string
	image      string
	replicas   int
	// kcpNamespace is the workspace's namespace of the service account.
	kcpNamespace string
	// output is the manifest file, "-" for stdout.
	output string
	// namespace is the syncer's namespace on the physical cluster; empty
	// means the syncer's ID.
	namespace  string
	qps        float32
	burst      int
	labels     []string
	cleanDelay time.Duration
	// timeout is how long to wait for the service account's token.
	timeout  time.Duration
	interval time.Duration
}

func newSyncOptions(interval time.Duration) *syncOptions {
	return &syncOptions{
		apiExports:   []string{"root:compute:kubernetes"},
		replicas:     1,
		kcpNamespace: "default",
		qps:          20,
		burst:        30,
		cleanDelay:   30 * time.Second,
		timeout:      30 * time.Second,
		interval:     interval,
	}
}

// settings are the parsed flags.
type settings struct {
	exports []tenancyv1alpha1.APIExportReference
	refs    []plugin.ExportRef
	labels  map[string]string
}

// validate checks the flags and the SyncTarget's name, and parses them.
func (o *syncOptions) validate(name string) (settings, error) {
	var (
		errs []error
		s    = settings{labels: map[string]string{}}
	)
	if o.image == "" {
		errs = append(errs, errors.New("--syncer-image is required"))
	}
	if o.output == "" {
		errs = append(errs, errors.New("--output-file is required"))
	}
	if o.kcpNamespace == "" {
		errs = append(errs, errors.New("--kcp-namespace is required"))
	}
	if o.replicas < 0 || o.replicas > 1 {
		// As kcp's: the syncer has no leader election.
		errs = append(errs, errors.New("only 0 and 1 are valid values for --replicas"))
	}
	if len(name) > maxSyncTargetNameLength {
		errs = append(errs, fmt.Errorf("the maximum length of the sync-target-name is %d", maxSyncTargetNameLength))
	}
	for _, l := range o.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" || strings.Contains(v, "=") {
			errs = append(errs, fmt.Errorf("label '%s' is not in the format of key=value", l))
			continue
		}
		s.labels[k] = v
	}
	for _, e := range o.apiExports {
		ref, err := plugin.ParseExportRef(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("--apiexports: %w", err))
			continue
		}
		s.refs = append(s.refs, ref)
		s.exports = append(s.exports, tenancyv1alpha1.APIExportReference{Path: ref.Path.String(), Export: ref.Name})
	}
	for _, r := range o.resources {
		if strings.TrimSpace(r) == "" || strings.HasPrefix(r, ".") {
			errs = append(errs, fmt.Errorf("--resources %q: the format is <resource>.<group>, the resource alone for the core group", r))
		}
	}
	return s, utilerrors.NewAggregate(errs)
}

// syncerID names a syncer's objects after its SyncTarget's name and UID,
// as kcp's plugin does.
func syncerID(name string, uid types.UID) string {
	return syncerIDPrefix + name + "-" + plugin.ShortHash(string(uid))
}

// run sets up the SyncTarget and its syncer's access in the current
// workspace and writes the physical cluster's manifest. Progress goes to
// errOut, as kcp's; the manifest to the file or, with "-", to out.
func (o *syncOptions) run(ctx context.Context, out, errOut io.Writer, name string) error {
	s, err := o.validate(name)
	if err != nil {
		return err
	}
	c, err := plugin.Connect(&o.client)
	if err != nil {
		return err
	}

	st, err := applySyncTarget(ctx, errOut, c.Dynamic, name, s)
	if apierrors.IsNotFound(err) && st == nil {
		// SyncTargets are not served here yet: bind root's
		// workload.kcp.io, as kcp's workspaces have it bound, and try
		// again once it serves them.
		if st, err = o.bindWorkloadAndApply(ctx, errOut, c, name, s); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("failed to apply synctarget %q: %w", name, err)
	}
	if err := bindScheduling(ctx, errOut, c); err != nil {
		return err
	}
	cluster := logicalcluster.From(st)
	if cluster.Empty() {
		return fmt.Errorf("synctarget %q has no %s annotation", name, logicalcluster.AnnotationKey)
	}
	id := syncerID(st.Name, st.UID)
	namespace := o.namespace
	if namespace == "" {
		namespace = id
	}
	if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
		return fmt.Errorf("the syncer's namespace %q on the physical cluster is invalid (use --namespace): %s", namespace, strings.Join(msgs, "; "))
	}

	token, err := o.enableSyncer(ctx, errOut, c.Kube, st, id)
	if err != nil {
		return err
	}
	kubeconfig, err := o.kubeconfig(c.CurrentConfig, token)
	if err != nil {
		return err
	}
	manifest, err := renderManifest(manifestInput{
		syncerID:      id,
		namespace:     namespace,
		syncTarget:    st.Name,
		syncTargetUID: string(st.UID),
		cluster:       cluster.String(),
		image:         o.image,
		replicas:      int32(o.replicas),
		resources:     o.resources,
		permissions:   permissions(ctx, errOut, c, st, o.resources, s.refs),
		qps:           o.qps,
		burst:         o.burst,
		cleanDelay:    o.cleanDelay,
		kubeconfig:    kubeconfig,
	})
	if err != nil {
		return err
	}
	if o.output == "-" {
		_, err = out.Write(manifest)
		return err
	}
	// The manifest holds the service account's token.
	if err := os.WriteFile(o.output, manifest, 0o600); err != nil {
		return fmt.Errorf("writing the manifest: %w", err)
	}
	_, err = fmt.Fprintf(errOut, "\nWrote physical cluster manifest to %s for namespace %q. Use\n\n  KUBECONFIG=<pcluster-config> kubectl apply -f %q\n\nto apply it. "+
		"Use\n\n  KUBECONFIG=<pcluster-config> kubectl get deployment -n %q %s\n\nto verify the syncer pod is running.\n", o.output, namespace, o.output, namespace, id)
	return err
}

// kubeconfig is the syncer's kubeconfig: the current workspace's URL and
// CA as the user's kubeconfig has them (a CA file inlined), with token.
func (o *syncOptions) kubeconfig(cfg *rest.Config, token string) ([]byte, error) {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("reading the CA of the kubeconfig: %w", err)
		}
	}
	return syncerKubeconfig(cfg.Host, ca, cfg.Insecure, token, o.kcpNamespace)
}

// applySyncTarget creates the SyncTarget, or updates its supported
// exports and the labels of the flags (other labels stay).
func applySyncTarget(ctx context.Context, errOut io.Writer, dyn dynamic.Interface, name string, s settings) (*workloadv1alpha1.SyncTarget, error) {
	client := dyn.Resource(syncTargetsGVR)
	var st *workloadv1alpha1.SyncTarget
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			if _, err := fmt.Fprintf(errOut, "Creating synctarget %q\n", name); err != nil {
				return err
			}
			labels := s.labels
			if len(labels) == 0 {
				labels = nil
			}
			st = &workloadv1alpha1.SyncTarget{
				TypeMeta:   metav1.TypeMeta{APIVersion: workloadv1alpha1.SchemeGroupVersion.String(), Kind: "SyncTarget"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Spec:       workloadv1alpha1.SyncTargetSpec{SupportedAPIExports: s.exports},
			}
			st, err = send(st, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return client.Create(ctx, u, metav1.CreateOptions{})
			})
			return err
		}
		if err != nil {
			return err
		}
		if st, err = fromUnstructured(u); err != nil {
			return err
		}
		changed := !apiequality.Semantic.DeepEqual(st.Spec.SupportedAPIExports, s.exports)
		st.Spec.SupportedAPIExports = s.exports
		for k, v := range s.labels {
			if st.Labels[k] != v {
				if st.Labels == nil {
					st.Labels = map[string]string{}
				}
				st.Labels[k], changed = v, true
			}
		}
		if !changed {
			return nil
		}
		st, err = send(st, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return client.Update(ctx, u, metav1.UpdateOptions{})
		})
		return err
	})
	return st, err
}

func fromUnstructured(u *unstructured.Unstructured) (*workloadv1alpha1.SyncTarget, error) {
	st := &workloadv1alpha1.SyncTarget{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, st); err != nil {
		return nil, err
	}
	return st, nil
}

// send writes st with write (a create or an update) and returns what the
// server stored.
func send(st *workloadv1alpha1.SyncTarget, write func(*unstructured.Unstructured) (*unstructured.Unstructured, error)) (*workloadv1alpha1.SyncTarget, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return nil, err
	}
	u, err := write(&unstructured.Unstructured{Object: m})
	if err != nil {
		return nil, err
	}
	return fromUnstructured(u)
}

// workloadExport is root's APIExport of SyncTargets.
const workloadExport = "workload.kcp.io"

// schedulingExport is root's APIExport of Locations and Placements.
const schedulingExport = "scheduling.kcp.io"

// bindScheduling binds root:scheduling.kcp.io in the current workspace
// unless it serves Locations already: the SyncTarget's workspace is where
// Placements find its Location (the shard makes the Location "default" of
// all SyncTargets there), as `kubectl kcp bind compute <this workspace>`
// expects.
func bindScheduling(ctx context.Context, errOut io.Writer, c *plugin.Clients) error {
	_, err := c.Dynamic.Resource(locationsGVR).List(ctx, metav1.ListOptions{Limit: 1})
	if !apierrors.IsNotFound(err) {
		return err
	}
	b := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: schedulingExport},
		Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
			Export: &apisv1alpha1.ExportBindingReference{Path: logicalcluster.Root.String(), Name: schedulingExport},
		}},
	}
	if _, err := c.KCP.APIBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("Locations are not served here, and binding APIExport root:%s failed: %w", schedulingExport, err)
	}
	fmt.Fprintf(errOut, "Binding APIExport %q for the SyncTarget's Location.\n", "root:"+schedulingExport)
	return nil
}

// bindWorkloadAndApply binds root:workload.kcp.io in the current workspace
// and applies the SyncTarget once the binding serves SyncTargets.
func (o *syncOptions) bindWorkloadAndApply(ctx context.Context, errOut io.Writer, c *plugin.Clients, name string, s settings) (*workloadv1alpha1.SyncTarget, error) {
	b := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: workloadExport},
		Spec: apisv1alpha1.APIBindingSpec{Reference: apisv1alpha1.BindingReference{
			Export: &apisv1alpha1.ExportBindingReference{Path: logicalcluster.Root.String(), Name: workloadExport},
		}},
	}
	if _, err := c.KCP.APIBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("SyncTargets are not served here, and binding APIExport root:%s failed: %w", workloadExport, err)
	}
	fmt.Fprintf(errOut, "Binding APIExport %q.\n", "root:"+workloadExport)
	err := wait.PollUntilContextTimeout(ctx, o.interval, o.timeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.Dynamic.Resource(syncTargetsGVR).List(ctx, metav1.ListOptions{Limit: 1})
		if apierrors.IsNotFound(err) || plugin.IsRetryable(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for SyncTargets to be served after binding root:%s: %w", workloadExport, err)
	}
	return applySyncTarget(ctx, errOut, c.Dynamic, name, s)
}

// WorkspaceRules are the syncer's permissions in the workspace, kcp's: the
// verb sync on its SyncTarget (the syncer virtual workspace checks it),
// reading and writing the SyncTarget and its status (heartbeats), its
// tunnel, API resource imports, and the workspace's root URL. Tessera's
// syncer imports the resources of --resources as APIResourceSchemas of the
// workspace's APIExport kubernetes (tessera-syncer's importer), which the
// last rules allow.
func WorkspaceRules(name string) []rbacv1.PolicyRule {
	group := []string{workloadv1alpha1.SchemeGroupVersion.Group}
	return []rbacv1.PolicyRule{
		{Verbs: []string{"sync"}, APIGroups: group, Resources: []string{"synctargets"}, ResourceNames: []string{name}},
		{Verbs: []string{"get"}, APIGroups: group, Resources: []string{"synctargets/tunnel"}, ResourceNames: []string{name}},
		{Verbs: []string{"get", "list", "watch"}, APIGroups: group, Resources: []string{"synctargets"}, ResourceNames: []string{name}},
		{Verbs: []string{"update", "patch"}, APIGroups: group, Resources: []string{"synctargets", "synctargets/status"}, ResourceNames: []string{name}},
		{Verbs: []string{"get", "create", "update", "delete", "list", "watch"}, APIGroups: []string{"apiresource.kcp.io"}, Resources: []string{"apiresourceimports"}},
		{Verbs: []string{"access"}, NonResourceURLs: []string{"/"}},
		{Verbs: []string{"get", "create"}, APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiresourceschemas"}},
		{Verbs: []string{"create"}, APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports"}},
		{Verbs: []string{"get", "update"}, APIGroups: []string{"apis.kcp.io"}, Resources: []string{"apiexports"}, ResourceNames: []string{"kubernetes"}},
	}
}

// ownerRefs make the SyncTarget the owner of its syncer's objects in the
// workspace, so that they go with it.
func ownerRefs(st *workloadv1alpha1.SyncTarget) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: workloadv1alpha1.SchemeGroupVersion.String(),
		Kind:       "SyncTarget",
		Name:       st.Name,
		UID:        st.UID,
	}}
}

// withOwner returns refs with the SyncTarget's reference, and whether it
// was missing.
func withOwner(refs []metav1.OwnerReference, st *workloadv1alpha1.SyncTarget) ([]metav1.OwnerReference, bool) {
	if slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == st.UID }) {
		return refs, false
	}
	return append(refs, ownerRefs(st)...), true
}

// enableSyncer creates or updates the syncer's service account, cluster
// role and binding in the workspace, and returns the service account's
// token.
func (o *syncOptions) enableSyncer(ctx context.Context, errOut io.Writer, kube kubernetes.Interface, st *workloadv1alpha1.SyncTarget, id string) (string, error) {
	sas := kube.CoreV1().ServiceAccounts(o.kcpNamespace)
	sa, err := sas.Get(ctx, id, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(errOut, "Creating service account %q\n", id)
		sa, err = sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: id, OwnerReferences: ownerRefs(st)}}, metav1.CreateOptions{})
		if err != nil {
			return "", fmt.Errorf("failed to create ServiceAccount %s/%s: %w", o.kcpNamespace, id, err)
		}
	case err != nil:
		return "", fmt.Errorf("failed to get the ServiceAccount %s/%s: %w", o.kcpNamespace, id, err)
	default:
		if refs, missing := withOwner(sa.OwnerReferences, st); missing {
			fmt.Fprintf(errOut, "Updating service account %q.\n", id)
			sa.OwnerReferences = refs
			if sa, err = sas.Update(ctx, sa, metav1.UpdateOptions{}); err != nil {
				return "", fmt.Errorf("failed to update ServiceAccount %s/%s: %w", o.kcpNamespace, id, err)
			}
		}
	}

	if err := applyClusterRole(ctx, errOut, kube, st, id); err != nil {
		return "", err
	}
	if err := applyClusterRoleBinding(ctx, errOut, kube, st, id, o.kcpNamespace); err != nil {
		return "", err
	}
	return o.waitToken(ctx, kube, sa)
}

func applyClusterRole(ctx context.Context, errOut io.Writer, kube kubernetes.Interface, st *workloadv1alpha1.SyncTarget, id string) error {
	roles := kube.RbacV1().ClusterRoles()
	rules := WorkspaceRules(st.Name)
	cr, err := roles.Get(ctx, id, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(errOut, "Creating cluster role %q to give service account %q\n\n 1. write and sync access to the synctarget %q\n 2. write access to apiresourceimports.\n\n", id, id, id)
		_, err = roles.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: id, OwnerReferences: ownerRefs(st)}, Rules: rules}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("failed to create ClusterRole %s: %w", id, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("failed to get ClusterRole %s: %w", id, err)
	}
	refs, missing := withOwner(cr.OwnerReferences, st)
	if !missing && apiequality.Semantic.DeepEqual(cr.Rules, rules) {
		return nil
	}
	fmt.Fprintf(errOut, "Updating cluster role %q with\n\n 1. write and sync access to the synctarget %q\n 2. write access to apiresourceimports.\n\n", id, id)
	cr.OwnerReferences, cr.Rules = refs, rules
	if _, err := roles.Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("failed to update ClusterRole %s: %w", id, err)
	}
	return nil
}

func applyClusterRoleBinding(ctx context.Context, errOut io.Writer, kube kubernetes.Interface, st *workloadv1alpha1.SyncTarget, id, namespace string) error {
	bindings := kube.RbacV1().ClusterRoleBindings()
	want := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: id, OwnerReferences: ownerRefs(st)},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: id, Namespace: namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: id},
	}
	fmt.Fprintf(errOut, "Creating or updating cluster role binding %q to bind service account %q to cluster role %q.\n", id, id, id)
	crb, err := bindings.Get(ctx, id, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("failed to get ClusterRoleBinding %s: %w", id, err)
	case crb.RoleRef != want.RoleRef:
		// The role of a binding cannot change.
		if err := bindings.Delete(ctx, id, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete ClusterRoleBinding %s: %w", id, err)
		}
	default:
		refs, missing := withOwner(crb.OwnerReferences, st)
		if !missing && apiequality.Semantic.DeepEqual(crb.Subjects, want.Subjects) {
			return nil
		}
		crb.OwnerReferences, crb.Subjects = refs, want.Subjects
		if _, err := bindings.Update(ctx, crb, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("failed to update ClusterRoleBinding %s: %w", id, err)
		}
		return nil
	}
	if _, err := bindings.Create(ctx, want, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("failed to create ClusterRoleBinding %s: %w", id, err)
	}
	return nil
}

// waitToken creates the token Secret of the service account unless it is
// there, and waits until the shard fills its token. A Secret that the
// shard deleted (it names an older service account of the same name) is
// made again.
func (o *syncOptions) waitToken(ctx context.Context, kube kubernetes.Interface, sa *corev1.ServiceAccount) (string, error) {
	secrets := kube.CoreV1().Secrets(sa.Namespace)
	name := tokenSecretName(sa.Name)
	var token string
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, o.interval, o.timeout, true, func(ctx context.Context) (bool, error) {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			s, err = secrets.Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: sa.Name}},
				Type:       corev1.SecretTypeServiceAccountToken,
			}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return false, nil
			}
		}
		switch {
		case err == nil:
		case ctx.Err() != nil, plugin.IsRetryable(err):
			lastErr = err
			return false, nil
		default:
			return false, fmt.Errorf("failed to get the token Secret %s/%s: %w", sa.Namespace, name, err)
		}
		if uid := s.Annotations[corev1.ServiceAccountUIDKey]; uid != "" && uid != string(sa.UID) {
			// Of an older service account: the shard deletes it.
			return false, nil
		}
		token = string(s.Data[corev1.ServiceAccountTokenKey])
		return token != "", nil
	})
	switch {
	case err == nil:
		return token, nil
	case wait.Interrupted(err) && ctx.Err() == nil:
		err = fmt.Errorf("timed out after %s waiting for the token of Secret %s/%s of ServiceAccount %s", o.timeout, sa.Namespace, name, sa.Name)
		if lastErr != nil {
			err = fmt.Errorf("%w; last error: %w", err, lastErr)
		}
		return "", err
	default:
		return "", err
	}
}

// permissions are the resources the syncer may do anything with on the
// physical cluster: Secrets and ConfigMaps, the --resources, those the
// SyncTarget reports as synced, and those of its supported exports. An
// export that cannot be read is left out, with a warning.
func permissions(ctx context.Context, errOut io.Writer, c *plugin.Clients, st *workloadv1alpha1.SyncTarget, resources []string, refs []plugin.ExportRef) []string {
	perms := append([]string{"secrets", "configmaps"}, resources...)
	for _, r := range st.Status.SyncedResources {
		perms = append(perms, qualifiedResource(r.Group, r.Resource))
	}
	for _, ref := range refs {
		path := ref.Path
		if path.Empty() {
			path = c.Path
		}
		exports, err := kcp.NewForConfig(c.Config(path))
		if err == nil {
			var export *apisv1alpha1.APIExport
			export, err = exports.APIExports().Get(ctx, ref.Name, metav1.GetOptions{})
			if err == nil {
				perms = append(perms, schemaResources(export.Spec.LatestResourceSchemas)...)
				continue
			}
		}
		fmt.Fprintf(errOut, "Warning: the resources of APIExport %q are not in the syncer's cluster role on the physical cluster: %v\n", ref.String(), err)
	}
	return perms
}

// schemaResources are the resources of APIResourceSchemas by their names,
// <prefix>.<resource>.<group>, with the group "core" for the core group.
func schemaResources(names []string) []string {
	var out []string
	for _, n := range names {
		parts := strings.SplitN(n, ".", 3)
		if len(parts) != 3 || parts[1] == "" {
			continue
		}
		group := parts[2]
		if group == "core" {
			group = ""
		}
		out = append(out, qualifiedResource(group, parts[1]))
	}
	return out
}
