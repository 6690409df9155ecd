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
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// AddToScheme registers CertificateSigningRequest and its list as
// certificates.k8s.io/v1 kinds and as kinds of the group's internal
// version, their defaulting, and their field selector labels
// (metadata.name, spec.signerName).
func AddToScheme(s *runtime.Scheme) error {
	internal := schema.GroupVersion{Group: certificatesv1.GroupName, Version: runtime.APIVersionInternal}
	for _, gv := range []schema.GroupVersion{certificatesv1.SchemeGroupVersion, internal} {
		s.AddKnownTypes(gv, &certificatesv1.CertificateSigningRequest{}, &certificatesv1.CertificateSigningRequestList{})
	}
	s.AddTypeDefaultingFunc(&certificatesv1.CertificateSigningRequest{}, func(obj interface{}) {
		SetDefaults(obj.(*certificatesv1.CertificateSigningRequest))
	})
	s.AddTypeDefaultingFunc(&certificatesv1.CertificateSigningRequestList{}, func(obj interface{}) {
		list := obj.(*certificatesv1.CertificateSigningRequestList)
		for i := range list.Items {
			SetDefaults(&list.Items[i])
		}
	})
	if err := s.AddFieldLabelConversionFunc(certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), ConvertFieldLabel); err != nil {
		return fmt.Errorf("registering CertificateSigningRequest field labels: %w", err)
	}
	return nil
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
