package apiapproval

import (
	"context"
	"fmt"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "crd-api-approval"

// Controller maintains the KubernetesAPIApprovalPolicyConformant condition
// of the CRDs of a shard.
type Controller struct {
	controller *reconciler.Controller
}

// New returns the API approval controller for all logical clusters of a
// shard. It reads CRDs through f's wildcard CustomResourceDefinitions
// informer, which f must start, and writes their status with client.
func New(client *clusters.APIExtensionsClusterClientset, f *informers.SharedInformerFactory) (*Controller, error) {
	if client == nil || f == nil {
		return nil, fmt.Errorf("%s: client and informer factory are required", ControllerName)
	}
	crds := f.CustomResourceDefinitions()
	a := &approver{
		getCRD: func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
			return crds.Lister().Cluster(cluster).Get(name)
		},
		patchStatus: crdstatus.NewPatcher(client),
	}
	c := reconciler.New(ControllerName, reconciler.Func(a.reconcile), reconciler.Options{Workers: 1})
	handler := cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
			return ok && apiextensionshelpers.IsProtectedCommunityGroup(crd.Spec.Group)
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

// Run maintains the condition until ctx is done. It fails if the controller
// has already run.
func (c *Controller) Run(ctx context.Context) error {
	return c.controller.Run(ctx)
}
