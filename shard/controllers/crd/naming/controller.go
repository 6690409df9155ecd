package naming

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "crd-naming"

// workers is the number of CRDs named in parallel; CRDs of one group in one
// logical cluster are named one after the other.
const workers = 4

// Controller is the CRD naming controller of a shard.
type Controller struct {
	controller *reconciler.Controller
}

// New returns the naming controller for all logical clusters of a shard. It
// reads CRDs through f's wildcard CustomResourceDefinitions informer, which
// f must start, and writes their status with client. builtin tells the
// names the shard's built-in APIs use; nil means none.
func New(client *clusters.APIExtensionsClusterClientset, f *informers.SharedInformerFactory, builtin BuiltinNames) (*Controller, error) {
	if client == nil || f == nil {
		return nil, fmt.Errorf("%s: client and informer factory are required", ControllerName)
	}
	crds := f.CustomResourceDefinitions()
	n := &namer{
		getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
			return crds.Lister().Cluster(cluster).Get(name)
		},
		listCRDs: func(cluster logicalcluster.Name) ([]*apiextensionsv1.CustomResourceDefinition, error) {
			return crds.Lister().Cluster(cluster).List(labels.Everything())
		},
		patchStatus: crdstatus.NewPatcher(client),
		recent:      newRecentWrites(time.Now),
		builtin:     builtin,
	}
	c := reconciler.New(ControllerName, reconciler.Func(n.reconcile), reconciler.Options{Workers: workers})
	n.enqueue = c.Enqueue
	if err := c.Watch(crds.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	return &Controller{controller: c}, nil
}

// Name returns ControllerName.
func (c *Controller) Name() string { return c.controller.Name() }

// Run names CRDs until ctx is done. It fails if the controller has already
// run.
func (c *Controller) Run(ctx context.Context) error {
	return c.controller.Run(ctx)
}
