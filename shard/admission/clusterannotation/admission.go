// Package clusterannotation sets the kcp.io/cluster annotation of every
// object created or updated to the request's logical cluster, in
// admission.
//
// Storage stamps the annotation on everything it writes, but a dry-run
// write never reaches storage: without this plugin, a dry-run create or
// update would answer with whatever kcp.io/cluster the client sent. It
// runs after the webhooks, so a tenant's webhook cannot change it either.
package clusterannotation

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/storage"
)

// PluginName names the plugin in the shard's chain.
const PluginName = "tessera.io/ClusterAnnotation"

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
}

var _ admission.MutationInterface = &Plugin{}

// New returns the plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// Admit sets the annotation on the object of a create or update of a
// resource (not of a subresource, whose object is not stored as such).
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" || a.GetObject() == nil {
		return nil
	}
	if _, err := meta.Accessor(a.GetObject()); err != nil {
		return nil
	}
	c, ok := logicalcluster.ClusterFrom(ctx)
	if !ok || c.Wildcard {
		return admission.NewForbidden(a, errors.New("writes need a logical cluster"))
	}
	if isReview(a) {
		return nil
	}
	return storage.SetCluster(a.GetObject(), c.Name)
}

// isReview tells whether a is a create of a review, which is answered and
// never stored.
func isReview(a admission.Attributes) bool {
	switch a.GetResource().Group {
	case "authentication.k8s.io", "authorization.k8s.io":
		return true
	}
	return false
}
