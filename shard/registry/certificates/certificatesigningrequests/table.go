package certificatesigningrequests

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/tessera-dev/tessera/shard/registry/printers"
)

// TableConvertor prints certificate signing requests as NAME AGE
// SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION.
func TableConvertor() printers.TableConvertor[*certificatesv1.CertificateSigningRequest] {
	specDocs := certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()
	return printers.TableConvertor[*certificatesv1.CertificateSigningRequest]{
		Columns: []metav1.TableColumnDefinition{
			printers.NameColumn(),
			printers.AgeColumn(),
			{Name: "SignerName", Type: "string", Description: specDocs["signerName"]},
			{Name: "Requestor", Type: "string", Description: specDocs["username"]},
			{Name: "RequestedDuration", Type: "string", Description: specDocs["expirationSeconds"]},
			{Name: "Condition", Type: "string", Description: certificatesv1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
		},
		Cells: func(csr *certificatesv1.CertificateSigningRequest) []interface{} {
			requested := "<none>"
			if csr.Spec.ExpirationSeconds != nil {
				requested = duration.HumanDuration(time.Duration(*csr.Spec.ExpirationSeconds) * time.Second)
			}
			return []interface{}{
				csr.Name,
				printers.Age(csr.CreationTimestamp),
				printers.OrNone(csr.Spec.SignerName),
				csr.Spec.Username,
				requested,
				condition(csr),
			}
		},
	}
}

// condition summarizes the state of a request: Denied, Approved or
// Pending, then ",Failed" and ",Issued" when they apply.
func condition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	switch {
	case denied:
		status = "Denied"
	case approved:
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}
