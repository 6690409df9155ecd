package crd

import (
	"context"
	"fmt"
	"sync"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/shard/controllers/crd/apiapproval"
	"github.com/tessera-dev/tessera/shard/controllers/crd/establishing"
	"github.com/tessera-dev/tessera/shard/controllers/crd/finalizer"
	"github.com/tessera-dev/tessera/shard/controllers/crd/naming"
)

// Controllers are the CRD controllers of a shard.
type Controllers struct {
	Naming       *naming.Controller
	Establishing *establishing.Controller
	APIApproval  *apiapproval.Controller
	Finalizer    *finalizer.Controller
}

// New returns the CRD controllers for all logical clusters of the shard that
// loopback addresses. They read CRDs through f's wildcard
// CustomResourceDefinitions informer, which f must start after New, and
// write through clients built from loopback that share one http.Client.
// builtin tells the names the shard's built-in APIs use, which no CRD may
// take (see naming.BuiltinNames); nil means none.
func New(loopback *rest.Config, f *informers.SharedInformerFactory, builtin naming.BuiltinNames) (*Controllers, error) {
	if loopback == nil || f == nil {
		return nil, fmt.Errorf("crd controllers: loopback config and informer factory are required")
	}
	httpClient, err := rest.HTTPClientFor(loopback)
	if err != nil {
		return nil, fmt.Errorf("crd controllers: building http client: %w", err)
	}
	crdClient, err := clusters.NewAPIExtensionsForConfigAndClient(loopback, httpClient)
	if err != nil {
		return nil, fmt.Errorf("crd controllers: %w", err)
	}
	dynamicClient, err := clusters.NewDynamicForConfigAndClient(loopback, httpClient)
	if err != nil {
		return nil, fmt.Errorf("crd controllers: %w", err)
	}

	var c Controllers
	if c.Naming, err = naming.New(crdClient, f, builtin); err != nil {
		return nil, err
	}
	if c.Establishing, err = establishing.New(crdClient, f); err != nil {
		return nil, err
	}
	if c.APIApproval, err = apiapproval.New(crdClient, f); err != nil {
		return nil, err
	}
	if c.Finalizer, err = finalizer.New(crdClient, dynamicClient, f); err != nil {
		return nil, err
	}
	return &c, nil
}

// Name names the CRD controllers as a whole.
func (c *Controllers) Name() string { return "crd-controllers" }

// Run runs every controller until ctx is done and returns when all have
// stopped. It fails if they have already run.
func (c *Controllers) Run(ctx context.Context) error {
	runs := []func(context.Context) error{c.Naming.Run, c.Establishing.Run, c.APIApproval.Run, c.Finalizer.Run}
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() { errs[i] = run(ctx) })
	}
	wg.Wait()
	return utilerrors.NewAggregate(errs)
}
