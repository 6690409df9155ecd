// Package resourcestate is the admission plugin that makes the objects of
// a placed namespace carry its placement: a create or update of a synced
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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"

	apisv1alpha1 "github.com/tessera-dev/tessera/pkg/apis/apis/v1alpha1"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
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

// Admit sets the state labels of a synced object in a placed namespace.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
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
	if !placed(ns) && !carriesState(obj.GetLabels()) {
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

// placed tells whether a namespace has state labels.
func placed(ns *corev1.Namespace) bool { return carriesState(ns.Labels) }

func carriesState(lbls map[string]string) bool {
	for k := range lbls {
		if len(k) > len(stateLabelPrefix) && k[:len(stateLabelPrefix)] == stateLabelPrefix {
			return true
		}
	}
	return false
}

const stateLabelPrefix = "state.workload.kcp.io/"
