package certs

import (
	"crypto/x509"
	"os"
	"testing"

	certutil "k8s.io/client-go/util/cert"
)

func TestEnsureCreatesAndReuses(t *testing.T) {
	dir := t.TempDir()
	f, err := Ensure(dir, []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(f.Serving.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.CertsFromFile(f.CA.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca[0])
	serving, _ := certutil.CertsFromFile(f.Serving.CertFile)
	if _, err := serving[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err != nil {
		t.Errorf("serving certificate does not verify for localhost: %v", err)
	}
	admin, _ := certutil.CertsFromFile(f.Admin.CertFile)
	if _, err := admin[0].Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate does not verify: %v", err)
	}
	if admin[0].Subject.Organization[0] != AdminGroup {
		t.Errorf("admin groups = %v", admin[0].Subject.Organization)
	}

	if _, err := Ensure(dir, []string{"127.0.0.1", "localhost"}); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(f.Serving.CertFile)
	if string(first) != string(again) {
		t.Errorf("a second start replaced a valid serving certificate")
	}

	if _, err := Ensure(dir, []string{"127.0.0.1", "shard.example"}); err != nil {
		t.Fatal(err)
	}
	serving, _ = certutil.CertsFromFile(f.Serving.CertFile)
	if err := serving[0].VerifyHostname("shard.example"); err != nil {
		t.Errorf("serving certificate was not renewed for a new host: %v", err)
	}
	ca2, _ := certutil.CertsFromFile(f.CA.CertFile)
	if !ca2[0].Equal(ca[0]) {
		t.Errorf("the CA changed")
	}
}
