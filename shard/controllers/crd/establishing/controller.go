package establishing

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "crd-establishing"

// workers is the number of CRDs established in parallel.
const workers = 2

// Controller is the CRD establishing controller of a shard.
type Controller struct {
	controller *reconciler.Controller
}

// New returns the establishing controller for all logical clusters of a
// shard. It reads CRDs through f's wildcard CustomResourceDefinitions
// informer, which f must start, and writes their status with client.
func New(client *clusters.APIExtensionsClusterClientset, f *informers.SharedInformerFactory) (*Controller, error) {
	if client == nil || f == nil {
		return nil, fmt.Errorf("%s: client and informer factory are required", ControllerName)
	}
	crds := f.CustomResourceDefinitions()
	e := &establisher{
		getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
			return crds.Lister().Cluster(cluster).Get(name)
		},
		patchStatus: crdstatus.NewPatcher(client),
	}
	c := reconciler.New(ControllerName, reconciler.Func(e.reconcile), reconciler.Options{Workers: workers})
	handler := cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
			return ok && needsEstablishing(crd)
		},
		Handler: c.EnqueueHandler(),
	}
	if err := c.Watch(crds.Informer(), handler); err != nil {
		return nil, err
	}
	return &Controller{controller: c}, nil
}

// Name returns ControllerName.
func (c *Controller) Name() string { return c.controller.Name() }

// Run establishes CRDs until ctx is done. It fails if the controller has
// already run.
func (c *Controller) Run(ctx context.Context) error {
	return c.controller.Run(ctx)
}
