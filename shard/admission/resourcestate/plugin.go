// Package resourcestate is the admission plugin that makes the objects of
// a placed namespace carry its placement, and that keeps users from placing
// a namespace by hand (only the shard's controllers set a namespace's
// state labels, deletion times and placement annotation): a create or update of a synced
// resource (ConfigMaps, Secrets and what the workspace's compute bindings
// bind) in a namespace with state.workload.kcp.io/<key> labels gets the
// same labels, and the namespace's deletion times, as kcp's resource
// controller sets them (see compute.ApplyNamespaceState). Doing it in the
// write itself costs no second write, and holds no informer of the objects;
// the compute controllers bring existing objects along when a namespace's
// placement changes.
package resourcestate

import (
	"context"
	"errors"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	schedulingv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/scheduling/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/shardadmin"
	"github.com/tessera-dev/tessera/shard/controllers/compute"
)

// PluginName names the plugin in the shard's chain.
const PluginName = "workload.kcp.io/ResourceState"

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	namespaces informers.Informer[*corev1.Namespace]
	bindings   informers.Informer[*apisv1alpha1.APIBinding]
	now        func() time.Time
}

var _ admission.MutationInterface = &Plugin{}

// New returns the plugin, reading namespaces and bindings from the shard's
// informers.
func New(namespaces informers.Informer[*corev1.Namespace], bindings informers.Informer[*apisv1alpha1.APIBinding]) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), namespaces: namespaces, bindings: bindings, now: time.Now}
}

// Admit sets the state labels of a synced object in a placed namespace,
// and keeps anyone but the shard's controllers from changing a
// namespace's placement.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() == "" && a.GetResource().GroupResource() == corev1.Resource("namespaces") {
		return guardNamespace(a)
	}
	if a.GetSubresource() != "" || a.GetNamespace() == "" || a.GetObject() == nil {
		return nil
	}
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard {
		return nil
	}
	ns, err := p.namespaces.Lister().Cluster(c.Name).Get(a.GetNamespace())
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil
	}
	if !placed(ns) && !compute.HasStateLabels(obj.GetLabels()) {
		return nil
	}
	bindings, err := p.bindings.Lister().Cluster(c.Name).List(labels.Everything())
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if !compute.IsSynced(a.GetResource().GroupResource(), bindings) {
		return nil
	}
	compute.ApplyNamespaceState(obj, ns, p.now())
	return nil
}

// guardNamespace refuses a create or update of a namespace by anyone but
// a shard admin (the compute controllers) that sets or changes its state
// labels, deletion times or placement annotation: a tenant must not
// schedule its workloads to a SyncTarget its Placements did not choose.
func guardNamespace(a admission.Attributes) error {
	if u := a.GetUserInfo(); u != nil && shardadmin.Is(u) {
		return nil
	}
	newObj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil
	}
	var oldLabels, oldAnnotations map[string]string
	if a.GetOldObject() != nil {
		if old, err := meta.Accessor(a.GetOldObject()); err == nil {
			oldLabels, oldAnnotations = old.GetLabels(), old.GetAnnotations()
		}
	}
	oldPlacement, oldPlaced := oldAnnotations[schedulingv1alpha1.PlacementAnnotationKey]
	newPlacement, newPlaced := newObj.GetAnnotations()[schedulingv1alpha1.PlacementAnnotationKey]
	if oldPlaced != newPlaced || oldPlacement != newPlacement ||
		!maps.Equal(compute.PlacementState(oldLabels, oldAnnotations), compute.PlacementState(newObj.GetLabels(), newObj.GetAnnotations())) {
		return admission.NewForbidden(a, errors.New("the labels state.workload.kcp.io/*, the annotations deletion.internal.workload.kcp.io/* and scheduling.kcp.io/placement of a namespace are set by its Placements, not by hand"))
	}
	return nil
}

// placed tells whether a namespace has state labels.
func placed(ns *corev1.Namespace) bool { return compute.HasStateLabels(ns.Labels) }
