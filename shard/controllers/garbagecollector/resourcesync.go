package garbagecollector

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// resourceSync keeps one monitor per custom resource that an Established
// CRD of any logical cluster defines, keyed by CRD name (<plural>.<group>,
// in Key.Name with no cluster): CRDs of the same name in many clusters share
// one monitor.
type resourceSync struct {
	// crdsNamed returns the CRDs of all logical clusters with a name.
	crdsNamed func(name string) ([]*apiextensionsv1.CustomResourceDefinition, error)
	// isBuiltin tells whether a built-in monitor covers a group resource.
	isBuiltin func(schema.GroupResource) bool
	// monitoredVersion returns the version a group resource is monitored
	// in.
	monitoredVersion func(schema.GroupResource) (string, bool)
	// ensure runs a monitor of a resource, replacing one of another
	// version.
	ensure func(schema.GroupVersionResource) error
	// remove stops the monitor of a group resource.
	remove func(schema.GroupResource)
}

// Reconcile starts, switches or stops the monitor of the custom resource
// that the CRDs named key.Name define.
func (r *resourceSync) Reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	gr := schema.ParseGroupResource(key.Name)
	if gr.Group == "" || r.isBuiltin(gr) {
		return reconciler.Result{}, nil
	}
	crds, err := r.crdsNamed(key.Name)
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("listing CRDs named %s: %w", key.Name, err)
	}
	current, _ := r.monitoredVersion(gr)
	version, ok := chooseVersion(crds, current)
	if !ok {
		if current != "" {
			r.remove(gr)
		}
		return reconciler.Result{}, nil
	}
	if version == current {
		return reconciler.Result{}, nil
	}
	if err := r.ensure(gr.WithVersion(version)); err != nil {
		return reconciler.Result{}, fmt.Errorf("monitoring %s: %w", gr.WithVersion(version), err)
	}
	klog.FromContext(ctx).V(2).Info("Monitoring custom resource", "resource", gr.WithVersion(version).String(), "previousVersion", current)
	return reconciler.Result{}, nil
}
