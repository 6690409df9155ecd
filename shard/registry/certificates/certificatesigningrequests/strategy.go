package certificatesigningrequests

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// Strategy implements the create, update and delete behaviour of
// certificate signing requests. The requester comes from the request's
// user; after creation, writes to the object change its metadata only: the
// status and approval subresources change the rest.
type Strategy struct {
	store.Strategy[*certificatesv1.CertificateSigningRequest]
}

// NewStrategy returns the strategy of certificate signing requests, typing
// objects with typer.
func NewStrategy(typer runtime.ObjectTyper) Strategy {
	return Strategy{store.NewStrategy(typer, store.ClusterScoped, ValidateCreate, ValidateUpdate)}
}

// GetResetFields returns the fields writes to the request reset: status.
func (Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(certificatesv1.SchemeGroupVersion, "status")
}

// PrepareForCreate records the requesting user in spec and clears the
// status: nobody creates an approved request.
func (Strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if user, ok := genericapirequest.UserFrom(ctx); ok {
		csr.Spec.Username = user.GetName()
		csr.Spec.UID = user.GetUID()
		csr.Spec.Groups = user.GetGroups()
		if extra := user.GetExtra(); len(extra) > 0 {
			csr.Spec.Extra = make(map[string]certificatesv1.ExtraValue, len(extra))
			for k, v := range extra {
				csr.Spec.Extra[k] = v
			}
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
}

// PrepareForUpdate keeps the spec and status of the stored request.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = oldCSR.Spec
	csr.Status = oldCSR.Status
}

// StatusStrategy is the update strategy of the status subresource, used by
// signers: it sets the certificate and conditions other than Approved and
// Denied, which it keeps as stored.
type StatusStrategy struct {
	Strategy
}

// GetResetFields returns the fields status writes reset: spec.
func (StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(certificatesv1.SchemeGroupVersion, "spec")
}

// PrepareForUpdate keeps the spec and the Approved and Denied conditions of
// the stored request, and stamps condition times.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = oldCSR.Spec
	csr.Status.Conditions = keepConditions(csr.Status.Conditions, oldCSR.Status.Conditions, certificatesv1.CertificateApproved)
	csr.Status.Conditions = keepConditions(csr.Status.Conditions, oldCSR.Status.Conditions, certificatesv1.CertificateDenied)
	stampConditions(csr, oldCSR, time.Now())
}

// ValidateUpdate validates a status update.
func (StatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateStatusUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest))
}

// ApprovalStrategy is the update strategy of the approval subresource: it
// changes the conditions, in practice Approved and Denied, and nothing
// else.
type ApprovalStrategy struct {
	Strategy
}

// GetResetFields returns the fields approval writes reset: spec and
// status.certificate.
func (ApprovalStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return store.ResetFields(certificatesv1.SchemeGroupVersion, "spec", "status.certificate")
}

// PrepareForUpdate keeps everything of the stored request but the
// conditions, and stamps condition times.
func (ApprovalStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	stampConditions(csr, oldCSR, time.Now())
	conditions := csr.Status.Conditions
	csr.Spec = oldCSR.Spec
	csr.Status = oldCSR.Status
	csr.Status.Conditions = conditions
}

// WarningsOnUpdate tells whoever newly approves a request that no
// certificate will follow: a shard has no signers.
func (ApprovalStrategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	if approved(csr) && !approved(oldCSR) {
		return []string{fmt.Sprintf("logical clusters have no signers: no certificate will be issued for signerName %q; status.certificate stays empty", csr.Spec.SignerName)}
	}
	return nil
}

func approved(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// ValidateUpdate validates an approval update.
func (ApprovalStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateApprovalUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest))
}

// keepConditions replaces the conditions of type t in conditions by those
// of old.
func keepConditions(conditions, old []certificatesv1.CertificateSigningRequestCondition, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	kept := make([]certificatesv1.CertificateSigningRequestCondition, 0, len(conditions))
	for _, c := range conditions {
		if c.Type != t {
			kept = append(kept, c)
		}
	}
	for _, c := range old {
		if c.Type == t {
			kept = append(kept, c)
		}
	}
	return kept
}

// stampConditions sets missing lastUpdateTime to now, and missing
// lastTransitionTime to that of the same condition in old, or now.
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest, now time.Time) {
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = metav1.NewTime(now)
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = metav1.NewTime(now)
		for _, o := range old.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}

// GetAttrs returns the labels and selectable fields of a request.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	return store.Attrs(obj, SelectableFields)
}

// SelectableFields returns the fields of a request a field selector can
// match: metadata.name and spec.signerName.
func SelectableFields(csr *certificatesv1.CertificateSigningRequest) fields.Set {
	return generic.AddObjectMetaFieldsSet(fields.Set{"spec.signerName": csr.Spec.SignerName}, &csr.ObjectMeta, false)
}
