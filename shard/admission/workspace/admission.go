package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/klog/v2"

	corev1alpha1 "github.com/tessera-dev/tessera/pkg/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/tenancy/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
)

// PluginName is the name of the plugin in the admission chain, the same as
// kcp's.
const PluginName = "tenancy.kcp.io/Workspace"

var workspacesResource = tenancyv1alpha1.Resource("workspaces")

// Config is what the plugin looks logical clusters, paths and workspace
// types up with, and asks permissions of. The functions read caches; the
// plugin starts nothing itself.
type Config struct {
	// LogicalCluster returns the LogicalCluster of a logical cluster of
	// this shard, or a NotFound error.
	LogicalCluster func(logicalcluster.Name) (*corev1alpha1.LogicalCluster, error)
	// ResolvePath returns the logical cluster a workspace path (e.g.
	// "root:org") addresses, and false when it is not known on this shard.
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	// WorkspaceType returns the WorkspaceType name of a logical cluster,
	// or a NotFound error.
	WorkspaceType func(cluster logicalcluster.Name, name string) (*tenancyv1alpha1.WorkspaceType, error)
	// Authorizer decides whether a user may "use" a workspace type. It is
	// the shard's authorizer chain; it reads the logical cluster of the
	// decision from the context (logicalcluster.ClusterFrom).
	Authorizer authorizer.Authorizer
	// Ready tells whether the caches behind the functions have synced;
	// nil means always.
	Ready func() bool
}

// Plugin is the workspace admission plugin: it defaults and resolves the
// type of new workspaces, records their owner, and enforces the rules of
// workspace types and of the fields only the system may set. It is safe for
// concurrent use.
type Plugin struct {
	*admission.Handler
	cfg Config
}

var (
	_ admission.MutationInterface       = &Plugin{}
	_ admission.ValidationInterface     = &Plugin{}
	_ admission.InitializationValidator = &Plugin{}
)

// New returns the plugin over cfg.
func New(cfg Config) *Plugin {
	p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), cfg: cfg}
	if cfg.Ready != nil {
		p.SetReadyFunc(cfg.Ready)
	}
	return p
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	var missing []string
	if p.cfg.LogicalCluster == nil {
		missing = append(missing, "LogicalCluster")
	}
	if p.cfg.ResolvePath == nil {
		missing = append(missing, "ResolvePath")
	}
	if p.cfg.WorkspaceType == nil {
		missing = append(missing, "WorkspaceType")
	}
	if p.cfg.Authorizer == nil {
		missing = append(missing, "Authorizer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s admission plugin: missing configuration %v", PluginName, missing)
	}
	return nil
}

// workspaceFrom returns the workspace of a request this plugin handles, or
// nil for requests it ignores: other resources and subresources.
func workspaceFrom(a admission.Attributes) (*tenancyv1alpha1.Workspace, error) {
	if a.GetResource().GroupResource() != workspacesResource || a.GetSubresource() != "" {
		return nil, nil
	}
	ws, ok := a.GetObject().(*tenancyv1alpha1.Workspace)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("unexpected %T for %s", a.GetObject(), workspacesResource))
	}
	return ws, nil
}

// Admit implements admission.MutationInterface. On create it defaults and
// resolves spec.type, adds the labels of the type, and records the owner.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetOperation() != admission.Create {
		return nil
	}
	ws, err := workspaceFrom(a)
	if ws == nil || err != nil {
		return err
	}
	cluster, err := p.createCluster(ctx, a)
	if err != nil {
		return err
	}
	r := p.newResolver()
	parent, err := r.parent(cluster)
	if err != nil {
		return forbidden(a, err)
	}

	if ws.Spec.Type == nil || ws.Spec.Type.Name == "" {
		ref, declaredIn, err := r.defaultChildType(parent.typ)
		if err != nil {
			return forbidden(a, err)
		}
		t, err := r.resolveRef(ref, lookupOrder(declaredIn))
		if err != nil {
			return refError(a, err)
		}
		ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: t.name, Path: t.path.String()}
		klog.FromContext(ctx).V(4).Info("Defaulted the type of a workspace", "cluster", cluster, "workspace", a.GetName(), "type", t)
	}
	t, err := r.resolveRef(*ws.Spec.Type, lookupOrder(parent.clusterRef))
	if err != nil {
		return refError(a, err)
	}
	if ws.Spec.Type.Path == "" {
		ws.Spec.Type.Path = t.path.String()
	}
	types, err := r.withExtended(t)
	if err != nil {
		return forbidden(a, err)
	}
	for _, t := range types {
		if t.obj == nil {
			continue
		}
		for k, v := range t.obj.Spec.AdditionalWorkspaceLabels {
			if _, ok := ws.Labels[k]; ok {
				continue
			}
			if ws.Labels == nil {
				ws.Labels = map[string]string{}
			}
			ws.Labels[k] = v
		}
	}

	u := a.GetUserInfo()
	if _, ok := ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]; ok && shardadmin.Is(u) {
		return nil
	}
	owner, err := OwnerAnnotationValue(u)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if ws.Annotations == nil {
		ws.Annotations = map[string]string{}
	}
	ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] = owner
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	ws, err := workspaceFrom(a)
	if ws == nil || err != nil {
		return err
	}
	switch a.GetOperation() {
	case admission.Create:
		return p.validateCreate(ctx, a, ws)
	case admission.Update:
		old, ok := a.GetOldObject().(*tenancyv1alpha1.Workspace)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("unexpected old object %T for %s", a.GetOldObject(), workspacesResource))
		}
		return validateUpdate(a, ws, old)
	}
	return nil
}

// validateCreate checks a new workspace: only the system sets spec.cluster
// and spec.URL, the owner is the requester, the type exists, the requester
// may use it, and the types of parent and child allow each other.
func (p *Plugin) validateCreate(ctx context.Context, a admission.Attributes, ws *tenancyv1alpha1.Workspace) error {
	cluster, err := p.createCluster(ctx, a)
	if err != nil {
		return err
	}
	u := a.GetUserInfo()
	master := shardadmin.Is(u)
	if !master && ws.Spec.Cluster != "" {
		return admission.NewForbidden(a, errors.New("spec.cluster can only be set by the system"))
	}
	if !master && ws.Spec.URL != "" {
		return admission.NewForbidden(a, errors.New("spec.URL can only be set by the system"))
	}
	if keys := changedSystemAnnotations(ws.Annotations, nil); !master && len(keys) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("%s can only be set by the system", annotationList(keys)))
	}
	if !master {
		owner, err := OwnerAnnotationValue(u)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey] != owner {
			return admission.NewForbidden(a, fmt.Errorf("annotation %s must name the requesting user: %s",
				tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey, owner))
		}
	}
	if ws.Spec.Type == nil || ws.Spec.Type.Name == "" || ws.Spec.Type.Path == "" {
		return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), field.ErrorList{
			field.Required(field.NewPath("spec", "type"), "a workspace type with name and path")})
	}

	r := p.newResolver()
	parent, err := r.parent(cluster)
	if err != nil {
		return forbidden(a, err)
	}
	t, err := r.resolveRef(*ws.Spec.Type, nil)
	if err != nil {
		return refError(a, err)
	}
	child, err := r.withExtended(t)
	if err != nil {
		return forbidden(a, err)
	}
	if err := p.authorizeUse(ctx, u, child); err != nil {
		return forbidden(a, err)
	}
	parentTypes := []*wsType{parent.typ}
	if parent.typ.obj != nil {
		if parentTypes, err = r.withExtended(parent.typ); err != nil {
			return forbidden(a, err)
		}
	}
	if err := allowedParents(parent, parentTypes, child); err != nil {
		return forbidden(a, err)
	}
	if err := allowedChildren(parent, parentTypes, child); err != nil {
		return forbidden(a, err)
	}
	return nil
}

// validateUpdate checks an update: spec.type never changes, and only the
// system changes spec.cluster, spec.URL, the owner annotation and the
// system annotations.
func validateUpdate(a admission.Attributes, ws, old *tenancyv1alpha1.Workspace) error {
	if old.Spec.Type != nil && !apiequality.Semantic.DeepEqual(ws.Spec.Type, old.Spec.Type) {
		return apierrors.NewInvalid(a.GetKind().GroupKind(), a.GetName(), field.ErrorList{
			field.Invalid(field.NewPath("spec", "type"), ws.Spec.Type, "field is immutable")})
	}
	if shardadmin.Is(a.GetUserInfo()) {
		return nil
	}
	if ws.Spec.Cluster != old.Spec.Cluster {
		return admission.NewForbidden(a, errors.New("spec.cluster can only be changed by the system"))
	}
	if ws.Spec.URL != old.Spec.URL {
		return admission.NewForbidden(a, errors.New("spec.URL can only be changed by the system"))
	}
	if keys := changedSystemAnnotations(ws.Annotations, old.Annotations); len(keys) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("%s can only be changed by the system", annotationList(keys)))
	}
	key := tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey
	owner, had := old.Annotations[key]
	if now, has := ws.Annotations[key]; now != owner || has != had {
		return admission.NewForbidden(a, fmt.Errorf("the owner of a workspace (annotation %s) cannot be changed", key))
	}
	return nil
}

// createCluster returns the logical cluster a workspace is created in,
// once the plugin is ready. Workspaces cannot be created in system
// clusters, nor without a user.
func (p *Plugin) createCluster(ctx context.Context, a admission.Attributes) (logicalcluster.Name, error) {
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() {
		return "", apierrors.NewInternalError(errors.New("no logical cluster in the request context"))
	}
	if a.GetUserInfo() == nil {
		return "", admission.NewForbidden(a, errors.New("no user"))
	}
	if c.Name.IsSystem() {
		return "", admission.NewForbidden(a, fmt.Errorf("workspaces cannot be created in the system logical cluster %q", c.Name))
	}
	if !p.WaitForReady() {
		return "", admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	return c.Name, nil
}

// authorizeUse refuses a workspace type the user may not use. types is
// the type followed by the types it extends (resolver.withExtended); the
// user needs verb "use" on the workspacetypes resource named like each of
// them, in that type's own logical cluster, as in kcp: extending a type
// does not pass on permission to use it. Members of system:masters may use
// every type.
func (p *Plugin) authorizeUse(ctx context.Context, u user.Info, types []*wsType) error {
	if shardadmin.Is(u) {
		return nil
	}
	for _, t := range types {
		attrs := authorizer.AttributesRecord{
			User:            u,
			Verb:            "use",
			APIGroup:        tenancyv1alpha1.SchemeGroupVersion.Group,
			APIVersion:      tenancyv1alpha1.SchemeGroupVersion.Version,
			Resource:        "workspacetypes",
			Name:            string(t.name),
			ResourceRequest: true,
		}
		decision, _, err := p.cfg.Authorizer.Authorize(logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: t.cluster}), attrs)
		if decision == authorizer.DecisionAllow {
			continue
		}
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Cannot tell whether the user may use a workspace type", "cluster", t.cluster, "type", t, "user", u.GetName(), "err", err)
		}
		if t == types[0] {
			return fmt.Errorf("user %q is not allowed to use workspace type %s", u.GetName(), t)
		}
		return fmt.Errorf("user %q is not allowed to use workspace type %s, which %s extends", u.GetName(), t, types[0])
	}
	return nil
}

// systemAnnotation tells whether only the system may set, change or
// remove the Workspace annotation key: core.kcp.io/shard and the
// internal.tenancy.kcp.io/cluster the workspace controller stores its
// scheduling decision in and trusts, and more generally every annotation
// of an internal kcp.io domain (internal.kcp.io, internal.<x>.kcp.io,
// <x>.internal.kcp.io). The owner annotation has rules of its own, and
// kcp.io/cluster is handled by the storage.
func systemAnnotation(key string) bool {
	if key == tenancyv1alpha1.WorkspaceShardAnnotationKey {
		return true
	}
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	return domain == "internal.kcp.io" || strings.HasSuffix(domain, ".internal.kcp.io") ||
		(strings.HasPrefix(domain, "internal.") && strings.HasSuffix(domain, ".kcp.io"))
}

// changedSystemAnnotations returns the sorted keys of the system
// annotations (systemAnnotation) that annotations sets, changes or removes
// compared with old (nil on create).
func changedSystemAnnotations(annotations, old map[string]string) []string {
	var keys []string
	for k, v := range annotations {
		if was, ok := old[k]; systemAnnotation(k) && (!ok || was != v) {
			keys = append(keys, k)
		}
	}
	for k := range old {
		if _, ok := annotations[k]; systemAnnotation(k) && !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// annotationList names the annotations keys for a message.
func annotationList(keys []string) string {
	if len(keys) == 1 {
		return "annotation " + keys[0]
	}
	return "annotations " + strings.Join(keys, ", ")
}

// OwnerAnnotationValue returns the value of the owner annotation
// (tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey) for u: the JSON
// of an authentication/v1 UserInfo.
func OwnerAnnotationValue(u user.Info) (string, error) {
	if u == nil {
		return "", errors.New("no user")
	}
	info := authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	if extra := u.GetExtra(); len(extra) > 0 {
		info.Extra = make(map[string]authenticationv1.ExtraValue, len(extra))
		for k, v := range extra {
			info.Extra[k] = v
		}
	}
	raw, err := json.Marshal(info)
	if err != nil {
		return "", fmt.Errorf("encoding the owner of a workspace: %w", err)
	}
	return string(raw), nil
}
