// Package apibinding checks, in admission, that whoever creates an
// APIBinding (or changes what it references) may bind the export: verb
// "bind" on apiexports/<name> of group apis.kcp.io in the export's logical
// cluster, as kcp's APIBinding admission does. The refusal is the same
// whether the workspace or the export exists or the user lacks the verb,
// so that it reveals nothing: 403 "unable to create APIBinding: no
// permission to bind to export <path>:<name>". Both forms of the
// reference are understood (export{path, name} and the older
// workspace{path, exportName}).
//
// It also refuses a CustomResourceDefinition whose resource a binding of
// the cluster serves, as kcp's no-overlapping-GVR admission does: the two
// would fight over the same URLs.
package apibinding

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
)

// PluginName names the plugin in the shard's chain.
const PluginName = "apis.kcp.io/APIBinding"

// Config is what the plugin needs.
type Config struct {
	// ResolvePath maps a workspace path to its logical cluster.
	ResolvePath func(logicalcluster.Path) (logicalcluster.Name, bool)
	// Authorizer decides in the cluster of its context.
	Authorizer authorizer.Authorizer
	// ExportExists tells whether an export exists.
	ExportExists func(cluster logicalcluster.Name, name string) bool
	// BoundBy returns the binding that serves group/resource in a
	// cluster, "" if none.
	BoundBy func(cluster logicalcluster.Name, group, resource string) string
}

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	cfg Config
}

var _ admission.ValidationInterface = &Plugin{}

// New returns the plugin.
func New(cfg Config) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), cfg: cfg}
}

// ValidateInitialization checks the configuration.
func (p *Plugin) ValidateInitialization() error {
	if p.cfg.ResolvePath == nil || p.cfg.Authorizer == nil || p.cfg.ExportExists == nil || p.cfg.BoundBy == nil {
		return errors.New(PluginName + ": ResolvePath, Authorizer, ExportExists and BoundBy are required")
	}
	return nil
}

// reference returns the path and name a binding references.
func reference(b *apisv1alpha1.APIBinding) (string, string) {
	if e := b.Spec.Reference.Export; e != nil {
		return e.Path, e.Name
	}
	if w := b.Spec.Reference.Workspace; w != nil {
		return w.Path, w.ExportName
	}
	return "", ""
}

// Validate refuses a binding its user may not make.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() == apiextensionsv1.Resource("customresourcedefinitions") && a.GetSubresource() == "" && a.GetOperation() == admission.Create {
		return p.validateCRD(ctx, a)
	}
	if a.GetResource().GroupResource() != apisv1alpha1.Resource("apibindings") || a.GetSubresource() != "" {
		return nil
	}
	b, ok := a.GetObject().(*apisv1alpha1.APIBinding)
	if !ok {
		return nil
	}
	action := "create"
	if a.GetOperation() == admission.Update {
		old, ok := a.GetOldObject().(*apisv1alpha1.APIBinding)
		if ok && equality.Semantic.DeepEqual(old.Spec.Reference, b.Spec.Reference) {
			return nil
		}
		action = "update"
	}
	path, name := reference(b)
	if name == "" {
		return nil // validation reports it
	}
	cluster, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || cluster.Wildcard {
		return admission.NewForbidden(a, errors.New("APIBindings are made in a logical cluster"))
	}
	shown := name
	if path != "" {
		shown = path + ":" + name
	}
	forbidden := admission.NewForbidden(a, fmt.Errorf("unable to %s APIBinding: no permission to bind to export %s", action, shown))
	exportCluster := cluster.Name
	if path != "" {
		resolved, ok := p.cfg.ResolvePath(logicalcluster.NewPath(path))
		if !ok {
			return forbidden
		}
		exportCluster = resolved
	}
	if !p.cfg.ExportExists(exportCluster, name) {
		return forbidden
	}
	attrs := authorizer.AttributesRecord{
		User:            a.GetUserInfo(),
		Verb:            "bind",
		APIGroup:        apisv1alpha1.SchemeGroupVersion.Group,
		APIVersion:      apisv1alpha1.SchemeGroupVersion.Version,
		Resource:        "apiexports",
		Name:            name,
		ResourceRequest: true,
	}
	decision, _, err := p.cfg.Authorizer.Authorize(logicalcluster.WithCluster(ctx, logicalcluster.Cluster{Name: exportCluster}), attrs)
	if err != nil || decision != authorizer.DecisionAllow {
		return forbidden
	}
	return nil
}

// validateCRD refuses a CRD of a resource a binding serves.
func (p *Plugin) validateCRD(ctx context.Context, a admission.Attributes) error {
	var group, plural string
	switch crd := a.GetObject().(type) {
	case *apiextensions.CustomResourceDefinition:
		group, plural = crd.Spec.Group, crd.Spec.Names.Plural
	case *apiextensionsv1.CustomResourceDefinition:
		group, plural = crd.Spec.Group, crd.Spec.Names.Plural
	default:
		return nil
	}
	cluster, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || cluster.Wildcard {
		return nil
	}
	if b := p.cfg.BoundBy(cluster.Name, group, plural); b != "" {
		return admission.NewForbidden(a, fmt.Errorf("%s.%s is already served by APIBinding %s", plural, group, b))
	}
	return nil
}
