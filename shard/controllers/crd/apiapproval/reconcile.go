package apiapproval

import (
	"context"
	"fmt"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/pkg/reconciler"
	"github.com/tessera-dev/tessera/shard/controllers/crd/internal/crdstatus"
)

// approver sets the KubernetesAPIApprovalPolicyConformant condition. Its
// dependencies are plain functions so that it can be tested without an API
// server.
type approver struct {
	// getCRD returns a CRD of a logical cluster from the informer cache, or
	// a NotFound error.
	getCRD func(cluster logicalcluster.Name, name string) (*apiextensionsv1.CustomResourceDefinition, error)
	// patchStatus writes the status of a CRD.
	patchStatus crdstatus.Patcher
}

// reconcile brings the condition of the CRD behind key in line with its
// approval annotation.
func (a *approver) reconcile(ctx context.Context, key reconciler.Key) (reconciler.Result, error) {
	cached, err := a.getCRD(key.Cluster, key.Name)
	if apierrors.IsNotFound(err) {
		return reconciler.Result{}, nil
	}
	if err != nil {
		return reconciler.Result{}, fmt.Errorf("getting CustomResourceDefinition: %w", err)
	}
	cond := calculateCondition(cached)
	if cond == nil {
		// The group is immutable: a CRD that needs no condition never had
		// one to remove.
		return reconciler.Result{}, nil
	}
	if old := apiextensionshelpers.FindCRDCondition(cached, apiextensionsv1.KubernetesAPIApprovalPolicyConformant); old != nil &&
		old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message {
		return reconciler.Result{}, nil
	}

	crd := cached.DeepCopy()
	apiextensionshelpers.SetCRDCondition(crd, *cond)
	if _, err := a.patchStatus(ctx, key.Cluster, cached, crd); apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(4).Info("CustomResourceDefinition changed while updating its API approval condition, waiting for its next event", "err", err)
		return reconciler.Result{}, nil
	} else if err != nil {
		return reconciler.Result{}, err
	}
	klog.FromContext(ctx).V(2).Info("Updated API approval condition", "status", cond.Status, "reason", cond.Reason)
	return reconciler.Result{}, nil
}

// calculateCondition returns the KubernetesAPIApprovalPolicyConformant
// condition of crd, or nil if its group is not protected. It is upstream's.
func calculateCondition(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionCondition {
	if !apiextensionshelpers.IsProtectedCommunityGroup(crd.Spec.Group) {
		return nil
	}
	cond := &apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.KubernetesAPIApprovalPolicyConformant}
	state, reason := apiextensionshelpers.GetAPIApprovalState(crd.Annotations)
	cond.Message = reason
	switch state {
	case apiextensionshelpers.APIApprovalInvalid:
		cond.Status, cond.Reason = apiextensionsv1.ConditionFalse, "InvalidAnnotation"
	case apiextensionshelpers.APIApprovalMissing:
		cond.Status, cond.Reason = apiextensionsv1.ConditionFalse, "MissingAnnotation"
	case apiextensionshelpers.APIApproved:
		cond.Status, cond.Reason = apiextensionsv1.ConditionTrue, "ApprovedAnnotation"
	case apiextensionshelpers.APIApprovalBypassed:
		cond.Status, cond.Reason = apiextensionsv1.ConditionFalse, "UnapprovedAnnotation"
	default:
		cond.Status, cond.Reason = apiextensionsv1.ConditionUnknown, "UnknownAnnotation"
	}
	return cond
}
