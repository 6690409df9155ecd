// Package admissionpolicystatus writes status.typeChecking of the
// ValidatingAdmissionPolicies of a shard, as kube-controller-manager's
// ValidatingAdmissionPolicy status controller does: each policy's
// validations and message expressions are type-checked (k8s.io/apiserver's
// TypeChecker) against the schemas of the kinds it matches in its own
// logical cluster, and the warnings are written with the observed
// generation.
//
// One controller serves every logical cluster from the shard's shared
// informer. The schemas and REST mappings of a cluster are read from that
// cluster's discovery (OpenAPI v3 included, so its CRDs are known) when a
// policy of it changes; nothing is kept per cluster.
package admissionpolicystatus

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/client/clusters"
	"github.com/tessera-dev/tessera/pkg/client/informers"
	"github.com/tessera-dev/tessera/pkg/reconciler"
)

// ControllerName names the controller in logs and queue metrics.
const ControllerName = "validatingadmissionpolicy-status"

// Controller writes the type checking status of policies.
type Controller struct {
	*reconciler.Controller
	policies informers.Informer[*admissionregistrationv1.ValidatingAdmissionPolicy]
	clients  *clusters.ClusterClientset
}

// New returns the controller; the factory must start after it.
func New(clients *clusters.ClusterClientset, f *informers.SharedInformerFactory) (*Controller, error) {
	c := &Controller{policies: f.ValidatingAdmissionPolicies(), clients: clients}
	c.Controller = reconciler.New(ControllerName, reconciler.Func(c.reconcile), reconciler.Options{Workers: 2})
	if err := c.Watch(c.policies.Informer(), c.EnqueueHandler()); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	policy, err := c.policies.Lister().Cluster(key.Cluster).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, err
	}
	if policy.Status.ObservedGeneration == policy.Generation && policy.Status.TypeChecking != nil {
		return reconciler.Result{}, nil
	}
	client, err := c.clients.For(key.Cluster)
	if err != nil {
		return reconciler.Result{}, err
	}
	discovery := memory.NewMemCacheClient(client.Discovery())
	checker := &validating.TypeChecker{
		SchemaResolver: &resolver.ClientDiscoveryResolver{Discovery: discovery},
		RestMapper:     restmapper.NewDeferredDiscoveryRESTMapper(discovery),
	}
	warnings := checker.Check(policy)
	status := admissionregistrationv1.ValidatingAdmissionPolicyStatus{
		ObservedGeneration: policy.Generation,
		TypeChecking:       &admissionregistrationv1.TypeChecking{ExpressionWarnings: warnings},
		Conditions:         policy.Status.Conditions,
	}
	if equality.Semantic.DeepEqual(status, policy.Status) {
		return reconciler.Result{}, nil
	}
	updated := policy.DeepCopy()
	updated.Status = status
	_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone, or changed meanwhile: the informer brings it back.
		return reconciler.Result{}, nil
	case err != nil:
		return reconciler.Result{}, fmt.Errorf("writing the type checking status of %s: %w", key.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Type-checked a ValidatingAdmissionPolicy", "generation", policy.Generation, "warnings", len(warnings))
	return reconciler.Result{}, nil
}
