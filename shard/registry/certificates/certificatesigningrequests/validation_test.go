package certificatesigningrequests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
)

// pemRequest returns a PEM-encoded certificate request for CN=alice.
func pemRequest(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}

func pemCertificate(t *testing.T) []byte {
	t.Helper()
	cert, _, err := certutil.GenerateSelfSignedCertKey("alice", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func newCSR(t *testing.T, mutate ...func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "alice", ResourceVersion: "1"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pemRequest(t),
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
	for _, m := range mutate {
		m(csr)
	}
	return csr
}

func trueCondition(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue, Reason: "Test"}
}

func checkFirst(t *testing.T, errs field.ErrorList, want string) {
	t.Helper()
	if want == "" {
		if len(errs) != 0 {
			t.Fatalf("want valid, got %v", errs)
		}
		return
	}
	if len(errs) == 0 || errs[0].Field != want {
		t.Fatalf("want first error on %q, got %v", want, errs)
	}
}

func TestValidateCreate(t *testing.T) {
	tests := []struct {
		name      string
		csr       *certificatesv1.CertificateSigningRequest
		wantField string
	}{
		{name: "valid", csr: newCSR(t)},
		{name: "custom signer", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com/my-signer.v1" })},
		{name: "expiration", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To[int32](3600) })},
		{name: "not PEM", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("hello") }), wantField: "spec.request"},
		{name: "wrong PEM type", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = pemCertificate(t) }), wantField: "spec.request"},
		{name: "garbage in PEM", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte("nope")})
		}), wantField: "spec.request"},
		{name: "no usages", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil }), wantField: "spec.usages"},
		{name: "unknown usage", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"teleport"}
		}), wantField: "spec.usages[0]"},
		{name: "duplicate usage", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageClientAuth}
		}), wantField: "spec.usages[1]"},
		{name: "no signer", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" }), wantField: "spec.signerName"},
		{name: "signer without path", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com" }), wantField: "spec.signerName"},
		{name: "signer with one-label domain", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example/signer" }), wantField: "spec.signerName"},
		{name: "signer too long", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.SignerName = "example.com/" + strings.Repeat(strings.Repeat("a", 60)+".", 10)[:600]
		}), wantField: "spec.signerName"},
		{name: "legacy signer", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = LegacyUnknownSignerName }), wantField: "spec.signerName"},
		{name: "short expiration", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Spec.ExpirationSeconds = ptr.To[int32](60) }), wantField: "spec.expirationSeconds"},
		{name: "approved and denied", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{trueCondition(certificatesv1.CertificateApproved), trueCondition(certificatesv1.CertificateDenied)}
		}), wantField: "status.conditions[1].type"},
		{name: "approved false", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionFalse}}
		}), wantField: "status.conditions[0].status"},
		{name: "bad certificate", csr: newCSR(t, func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = []byte("x") }), wantField: "status.certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkFirst(t, ValidateCreate(tt.csr), tt.wantField) })
	}
}

func TestValidateUpdates(t *testing.T) {
	base := newCSR(t)
	with := func(mutate func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
		c := base.DeepCopy()
		mutate(c)
		return c
	}
	approved := with(func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{trueCondition(certificatesv1.CertificateApproved)}
	})
	issued := with(func(c *certificatesv1.CertificateSigningRequest) {
		c.Status.Conditions = approved.Status.Conditions
		c.Status.Certificate = pemCertificate(t)
	})
	tests := []struct {
		name      string
		errs      field.ErrorList
		wantField string
	}{
		{name: "main: labels", errs: ValidateUpdate(with(func(c *certificatesv1.CertificateSigningRequest) { c.Labels = map[string]string{"a": "b"} }), base)},
		{name: "main: may not approve", errs: ValidateUpdate(approved, base), wantField: "status.conditions"},
		{name: "main: may not issue", errs: ValidateUpdate(issued, approved), wantField: "status.certificate"},
		{name: "approval: approve", errs: ValidateApprovalUpdate(approved, base)},
		{name: "approval: may not remove approval", errs: ValidateApprovalUpdate(base, approved), wantField: "status.conditions"},
		{name: "approval: may not issue", errs: ValidateApprovalUpdate(issued, approved), wantField: "status.certificate"},
		{name: "status: issue", errs: ValidateStatusUpdate(issued, approved)},
		{name: "status: may not approve", errs: ValidateStatusUpdate(approved, base), wantField: "status.conditions"},
		{name: "status: may not reissue", errs: ValidateStatusUpdate(with(func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = approved.Status.Conditions
			c.Status.Certificate = pemCertificate(t)
		}), issued), wantField: "status.certificate"},
		{name: "status: failed", errs: ValidateStatusUpdate(with(func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(append(c.Status.Conditions, approved.Status.Conditions...), trueCondition(certificatesv1.CertificateFailed))
		}), approved)},
		{name: "legacy signer kept on update", errs: ValidateUpdate(
			with(func(c *certificatesv1.CertificateSigningRequest) {
				c.Spec.SignerName = LegacyUnknownSignerName
				c.Labels = map[string]string{"a": "b"}
			}),
			with(func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = LegacyUnknownSignerName }))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkFirst(t, tt.errs, tt.wantField) })
	}
}
