package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestCSRApprovalWarnsThatNoCertificateFollows: a shard has no signers, so
// kubectl certificate approve says that no certificate will be issued, and
// none is.
func TestCSRApprovalWarnsThatNoCertificateFollows(t *testing.T) {
	s := framework.StartShard(t)
	c := logicalcluster.Name("csr")
	createCluster(t, s, c)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: "example.com/signer",
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth},
		},
	}
	if _, err := kube(t, s, c).CertificatesV1().CertificateSigningRequests().Create(t.Context(), csr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := s.MustKubectl(t, c, "certificate", "approve", "alice")
	if !strings.Contains(out, "no certificate will be issued") || !strings.Contains(out, "example.com/signer") {
		t.Errorf("kubectl certificate approve did not warn that nothing will sign:\n%s", out)
	}
	time.Sleep(500 * time.Millisecond)
	got, err := kube(t, s, c).CertificatesV1().CertificateSigningRequests().Get(t.Context(), "alice", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Certificate) != 0 {
		t.Errorf("a certificate was issued: %q", got.Status.Certificate)
	}
	out = s.MustKubectl(t, c, "get", "csr", "alice")
	if !strings.Contains(out, "Approved") || strings.Contains(out, "Issued") {
		t.Errorf("kubectl get csr:\n%s\nwant Approved and not Issued", out)
	}
}
