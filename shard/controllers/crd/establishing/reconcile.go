package establishing

import (
	"context"
	"fmt"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// establisher sets the Established condition. Its dependencies are plain
// functions so that it can be tested without an API server.
type establisher struct {
	// getCRD returns a CRD of a logical cluster from the informer cache, or
	// a NotFound error.
	getCRD func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error)
	// patchStatus writes the status of a CRD.
	patchStatus crdstatus.Patcher
}

// reconcile establishes the CRD behind key if its names are accepted.
func (e *establisher) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	cached, err := e.getCRD(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting CustomResourceDefinition: %w", err)
	}
	if !needsEstablishing(cached) {
		return reconciler.Result{}, nil
	}

	crd := cached.DeepCopy()
	cond := establishedCondition(crd)
	apiextensionshelpers.SetCRDCondition(crd, cond)
	if _, err := e.patchStatus(ctx, key.Cluster, cached, crd); apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(4).Info("CustomResourceDefinition changed while establishing it, waiting for its next event", "err", err)
		return reconciler.Result{}, nil
	} else if err != nil {
		return reconciler.Result{}, err
	}
	klog.FromContext(ctx).V(2).Info("Updated Established condition", "status", cond.Status, "reason", cond.Reason)
	return reconciler.Result{}, nil
}

// needsEstablishing tells whether crd has accepted names and is not
// Established yet.
func needsEstablishing(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) &&
		!apiextensionshelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
}

// establishedCondition returns the Established condition of a CRD whose
// names are accepted.
func establishedCondition(crd *apiextensionsv1.CustomResourceDefinition) apiextensionsv1.CustomResourceDefinitionCondition {
	if c := crd.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil &&
		len(webhook.ValidateCABundle(field.NewPath(""), c.Webhook.ClientConfig.CABundle)) > 0 {
		return apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Established,
			Status:  apiextensionsv1.ConditionFalse,
			Reason:  "InvalidCABundle",
			Message: "The conversion webhook CABundle is invalid",
		}
	}
	return apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Established,
		Status:  apiextensionsv1.ConditionTrue,
		Reason:  "InitialNamesAccepted",
		Message: "the initial names have been accepted",
	}
}
