package server

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/shard/controllers/clusterroleaggregation"
	crdctrl "github.com/tessera-dev/tessera/shard/controllers/crd"
	"github.com/tessera-dev/tessera/shard/controllers/defaultnamespace"
	"github.com/tessera-dev/tessera/shard/controllers/garbagecollector"
	"github.com/tessera-dev/tessera/shard/controllers/logicalclusterdeletion"
	namespacectrl "github.com/tessera-dev/tessera/shard/controllers/namespace"
	serviceaccountctrl "github.com/tessera-dev/tessera/shard/controllers/serviceaccount"
	"github.com/tessera-dev/tessera/shard/controllers/serviceaccounttokens"
)

// runner is a controller the shard runs until it stops.
type runner interface {
	Name() string
	Run(ctx context.Context) error
}

// newControllers builds the shard's controllers over its shared informers.
// They must exist before the informers start, so their informers are
// started with the others.
func (s *Server) newControllers() error {
	kube, err := clusters.NewForConfig(s.Generic.LoopbackClientConfig)
	if err != nil {
		return err
	}
	dn, err := defaultnamespace.New(kube, s.Informers)
	if err != nil {
		return fmt.Errorf("default namespace controller: %w", err)
	}
	s.controllers = append(s.controllers, dn)

	loopback := s.Generic.LoopbackClientConfig
	ns, err := namespacectrl.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("namespace controller: %w", err)
	}
	sa, err := serviceaccountctrl.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("service account controller: %w", err)
	}
	gcc, err := garbagecollector.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("garbage collector: %w", err)
	}
	crds, err := crdctrl.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("CRD controllers: %w", err)
	}
	lcd, err := logicalclusterdeletion.New(loopback, s.Informers, s.DeleteClusterData)
	if err != nil {
		return fmt.Errorf("logical cluster deletion controller: %w", err)
	}
	cra, err := clusterroleaggregation.New(loopback, s.Informers)
	if err != nil {
		return fmt.Errorf("clusterrole aggregation controller: %w", err)
	}
	tokens, err := serviceaccounttokens.New(loopback, s.Informers.ServiceAccounts(), s.tokenSecrets.Secrets(), s.authnConfig.Issuer(), s.authnConfig.RootCA())
	if err != nil {
		return fmt.Errorf("service account token controller: %w", err)
	}
	s.controllers = append(s.controllers, ns, sa, gcc, crds, lcd, cra, tokens)
	return nil
}

// runControllers starts every controller; each runs until ctx is done.
func (s *Server) runControllers(ctx context.Context) {
	for _, c := range s.controllers {
		go func() {
			if err := c.Run(ctx); err != nil && ctx.Err() == nil {
				klog.FromContext(ctx).Error(err, "Controller stopped", "controller", c.Name())
			}
		}()
	}
}
