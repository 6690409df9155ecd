package rbacescalation

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
)

// PluginName is the name of the plugin in the admission chain.
const PluginName = "RBACEscalation"

var (
	roles               = rbacv1.Resource("roles")
	clusterRoles        = rbacv1.Resource("clusterroles")
	roleBindings        = rbacv1.Resource("rolebindings")
	clusterRoleBindings = rbacv1.Resource("clusterrolebindings")
)

// Dependencies are what the plugin checks with.
type Dependencies struct {
	// RulesFor returns the RBAC rules u holds in a namespace of a logical
	// cluster ("" for cluster-wide rules). An error with rules means they
	// are incomplete but valid.
	RulesFor func(ctx context.Context, cluster logicalcluster.Name, u user.Info, namespace string) ([]rbacv1.PolicyRule, error)
	// RoleRefRules returns the rules of the role a binding in a namespace
	// ("" for ClusterRoleBindings) of a logical cluster refers to, from a
	// cache, or a NotFound error.
	RoleRefRules func(cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error)
	// LiveRoleRefRules is RoleRefRules from the API server, asked when
	// the cache does not know the role (it may have just been created).
	// Optional.
	LiveRoleRefRules func(ctx context.Context, cluster logicalcluster.Name, ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error)
	// Authorizer decides the verbs escalate and bind; it is the shard's
	// authorizer, evaluated in the request's logical cluster.
	Authorizer authorizer.Authorizer
	// Ready tells whether what RulesFor reads has synced; nil means
	// always.
	Ready func() bool
}

// Plugin is the RBAC escalation admission plugin. It is safe for
// concurrent use.
type Plugin struct {
	*admission.Handler
	deps Dependencies
}

var (
	_ admission.ValidationInterface     = &Plugin{}
	_ admission.InitializationValidator = &Plugin{}
)

// New returns the plugin over deps.
func New(deps Dependencies) *Plugin {
	p := &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), deps: deps}
	if deps.Ready != nil {
		p.SetReadyFunc(deps.Ready)
	}
	return p
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	var missing []string
	if p.deps.RulesFor == nil {
		missing = append(missing, "RulesFor")
	}
	if p.deps.RoleRefRules == nil {
		missing = append(missing, "RoleRefRules")
	}
	if p.deps.Authorizer == nil {
		missing = append(missing, "Authorizer")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s admission plugin: missing dependencies %v", PluginName, missing)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	gr := a.GetResource().GroupResource()
	if a.GetSubresource() != "" || (gr != roles && gr != clusterRoles && gr != roleBindings && gr != clusterRoleBindings) {
		return nil
	}
	u := a.GetUserInfo()
	if u == nil {
		return admission.NewForbidden(a, errors.New("no user"))
	}
	if shardadmin.Is(u) {
		return nil
	}
	if a.GetOperation() == admission.Update && onlyGCFieldsChange(a.GetObject(), a.GetOldObject()) {
		return nil
	}
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard || c.Name.Empty() {
		return apierrors.NewInternalError(errors.New("no logical cluster in the request context"))
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	req := request{ctx: ctx, cluster: c.Name, user: u, namespace: a.GetNamespace(), name: a.GetName(), resource: gr}

	switch obj := a.GetObject().(type) {
	case *rbacv1.Role:
		return p.checkRole(req, obj.Rules, false)
	case *rbacv1.ClusterRole:
		aggregated := obj.AggregationRule != nil
		if old, ok := a.GetOldObject().(*rbacv1.ClusterRole); ok && old.AggregationRule != nil {
			aggregated = true
		}
		return p.checkRole(req, obj.Rules, aggregated)
	case *rbacv1.RoleBinding:
		return p.checkBinding(req, obj.RoleRef)
	case *rbacv1.ClusterRoleBinding:
		return p.checkBinding(req, obj.RoleRef)
	default:
		return apierrors.NewInternalError(fmt.Errorf("unexpected %T for %s", a.GetObject(), gr))
	}
}

// request is what the checks need of an admission request.
type request struct {
	ctx       context.Context
	cluster   logicalcluster.Name
	user      user.Info
	namespace string
	name      string
	resource  schema.GroupResource
}

// forbidden is the 403 of a refused request.
func (r request) forbidden(err error) error {
	return apierrors.NewForbidden(r.resource, r.name, err)
}

// checkRole refuses a role with rules the requester does not hold, or an
// aggregated ClusterRole by a requester who does not hold everything,
// unless the requester may escalate the role.
func (p *Plugin) checkRole(r request, rules []rbacv1.PolicyRule, aggregated bool) error {
	if p.authorized(r, authorizer.AttributesRecord{
		User: r.user, Verb: "escalate", APIGroup: r.resource.Group, APIVersion: "*", Resource: r.resource.Resource,
		Namespace: r.namespace, Name: r.name, ResourceRequest: true,
	}) {
		return nil
	}
	owned, resolveErr := p.deps.RulesFor(r.ctx, r.cluster, r.user, r.namespace)
	if err := confirmNoEscalation(r.user, owned, rules, resolveErr); err != nil {
		return r.forbidden(err)
	}
	if aggregated {
		if covered, _ := coversAll(owned); !covered {
			return r.forbidden(errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
	}
	return nil
}

// checkBinding refuses a binding to a role whose rules the requester does
// not hold, unless the requester may bind that role.
func (p *Plugin) checkBinding(r request, ref rbacv1.RoleRef) error {
	bind := authorizer.AttributesRecord{
		User: r.user, Verb: "bind", APIGroup: ref.APIGroup, Namespace: r.namespace, Name: ref.Name, ResourceRequest: true,
	}
	switch ref.Kind {
	case "ClusterRole":
		bind.Resource = "clusterroles"
	case "Role":
		bind.Resource = "roles"
	}
	if bind.Resource != "" && p.authorized(r, bind) {
		return nil
	}
	rules, err := p.deps.RoleRefRules(r.cluster, ref, r.namespace)
	if apierrors.IsNotFound(err) && p.deps.LiveRoleRefRules != nil {
		rules, err = p.deps.LiveRoleRefRules(r.ctx, r.cluster, ref, r.namespace)
	}
	if err != nil {
		return r.forbidden(err)
	}
	owned, resolveErr := p.deps.RulesFor(r.ctx, r.cluster, r.user, r.namespace)
	if err := confirmNoEscalation(r.user, owned, rules, resolveErr); err != nil {
		return r.forbidden(err)
	}
	return nil
}

// authorized tells whether the shard's authorizer allows attrs in the
// request's cluster.
func (p *Plugin) authorized(r request, attrs authorizer.AttributesRecord) bool {
	d, _, _ := p.deps.Authorizer.Authorize(r.ctx, attrs)
	return d == authorizer.DecisionAllow
}

// onlyGCFieldsChange tells whether an update changes nothing but what the
// garbage collector changes: owner references and finalizers (and the
// managed fields that record them).
func onlyGCFieldsChange(obj, old runtime.Object) bool {
	if obj == nil || old == nil {
		return false
	}
	return sameExceptGCFields(obj, old)
}
