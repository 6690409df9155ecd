// Package certificatesigningrequests is the registry of
// certificates.k8s.io/v1 certificatesigningrequests: scheme registration,
// defaulting, the strategies of the request and of its status and approval
// subresources, validation, storage and table printing.
package certificatesigningrequests

import (
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tessera-dev/tessera/shard/registry/store"
)

// AddToScheme registers CertificateSigningRequest and its list as
// certificates.k8s.io/v1 kinds and as kinds of the group's internal
// version, their defaulting, and their field selector labels
// (metadata.name, spec.signerName).
func AddToScheme(s *runtime.Scheme) error {
	store.AddKnownTypes(s, certificatesv1.SchemeGroupVersion, &certificatesv1.CertificateSigningRequest{}, &certificatesv1.CertificateSigningRequestList{})
	store.AddDefaulting(s, SetDefaults, func(l *certificatesv1.CertificateSigningRequestList) []certificatesv1.CertificateSigningRequest {
		return l.Items
	})
	return store.AddFieldLabels(s, certificatesv1.SchemeGroupVersion, ConvertFieldLabel, "CertificateSigningRequest")
}

// ConvertFieldLabel accepts the field selector labels of certificate
// signing requests.
func ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "spec.signerName":
		return label, value, nil
	default:
		return "", "", fmt.Errorf("field label not supported: %s", label)
	}
}

// SetDefaults sets the status of conditions without one to True.
func SetDefaults(csr *certificatesv1.CertificateSigningRequest) {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Status == "" {
			csr.Status.Conditions[i].Status = corev1.ConditionTrue
		}
	}
}
