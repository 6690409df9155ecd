package finalizer

import (
	"context"
	"fmt"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "crd-finalizer"

// workers is the number of CRDs finalized in parallel.
const workers = 4

// Controller is the CRD finalizer of a shard.
type Controller struct {
	controller *reconciler.Controller
}

// New returns the CRD finalizer for all logical clusters of a shard. It
// reads CRDs through f's wildcard CustomResourceDefinitions informer, which
// f must start, writes their status and finalizers with crdClient, and
// lists and deletes custom resources with dynamicClient.
func New(crdClient *clusters.APIExtensionsClusterClientset, dynamicClient *clusters.DynamicClusterClient, f *informers.SharedInformerFactory) (*Controller, error) {
	if crdClient == nil || dynamicClient == nil || f == nil {
		return nil, fmt.Errorf("%s: clients and informer factory are required", ControllerName)
	}
	crds := f.CustomResourceDefinitions()
	cl := &cleaner{
		getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
			return crds.Lister().Cluster(cluster).Get(name)
		},
		patchStatus:     crdstatus.NewPatcher(crdClient),
		listInstances:   listInstancesFunc(dynamicClient),
		deleteInstances: deleteInstancesFunc(dynamicClient),
		pollInterval:    defaultPollInterval,
	}
	c := reconciler.New(ControllerName, reconciler.Func(cl.reconcile), reconciler.Options{Workers: workers})
	if err := c.Watch(crds.Informer(), eventHandler(c)); err != nil {
		return nil, err
	}
	return &Controller{controller: c}, nil
}

// Name returns ControllerName.
func (c *Controller) Name() string { return c.controller.Name() }

// Run finalizes deleted CRDs until ctx is done. It fails if the controller
// has already run.
func (c *Controller) Run(ctx context.Context) error {
	return c.controller.Run(ctx)
}

// eventHandler enqueues CRDs that are being deleted and still have the
// cleanup finalizer. Like upstream it ignores updates that only change the
// Terminating condition, which the finalizer writes itself, so that it does
// not reconcile its own writes; resyncs are always enqueued.
func eventHandler(c *reconciler.Controller) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok && needsCleanup(crd) {
				c.EnqueueObject(crd)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldCRD, ok1 := oldObj.(*apiextensionsv1.CustomResourceDefinition)
			newCRD, ok2 := newObj.(*apiextensionsv1.CustomResourceDefinition)
			if !ok1 || !ok2 || !needsCleanup(newCRD) {
				return
			}
			if oldCRD.ResourceVersion == newCRD.ResourceVersion || !onlyTerminatingChanged(oldCRD, newCRD) {
				c.EnqueueObject(newCRD)
			}
		},
	}
}

// onlyTerminatingChanged tells whether old and new differ in nothing but
// their resourceVersion, managed fields and Terminating condition.
func onlyTerminatingChanged(old, new *apiextensionsv1.CustomResourceDefinition) bool {
	old, new = old.DeepCopy(), new.DeepCopy()
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{old, new} {
		crd.ResourceVersion = ""
		crd.ManagedFields = nil
		apiextensionshelpers.RemoveCRDCondition(crd, apiextensionsv1.Terminating)
	}
	return equality.Semantic.DeepEqual(old, new)
}
