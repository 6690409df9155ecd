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

func TestEnsureWithInstallationCA(t *testing.T) {
	installation := t.TempDir()
	ca, caKey, err := EnsureCA(Pair{installation + "/ca.crt", installation + "/ca.key"})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	hosts := []string{"127.0.0.1", "localhost"}

	// A shard started before it was given the installation CA.
	dir := t.TempDir()
	if _, err := Ensure(dir, hosts); err != nil {
		t.Fatal(err)
	}
	f, err := EnsureWith(dir, hosts, Sources{CA: Pair{installation + "/ca.crt", installation + "/ca.key"}, ShardName: "shard-1"})
	if err != nil {
		t.Fatal(err)
	}
	if f.CA.CertFile != installation+"/ca.crt" {
		t.Errorf("CA %s, want the installation CA", f.CA.CertFile)
	}
	for name, p := range map[string]Pair{"serving": f.Serving, "admin": f.Admin, "kcp-admin": f.KCPAdmin, "shard client": f.ShardClient} {
		certs, err := certutil.CertsFromFile(p.CertFile)
		if err != nil {
			t.Fatal(err)
		}
		usage := x509.ExtKeyUsageClientAuth
		if name == "serving" {
			usage = x509.ExtKeyUsageServerAuth
		}
		if _, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("%s certificate is not signed by the installation CA: %v", name, err)
		}
	}
	client, _ := certutil.CertsFromFile(f.ShardClient.CertFile)
	if got := client[0].Subject; got.CommonName != "system:shard:shard-1" || len(got.Organization) != 1 || got.Organization[0] != AdminGroup {
		t.Errorf("shard client certificate subject %v, want system:shard:shard-1 in %s", got, AdminGroup)
	}

	// Given serving and shard client certificates are used as they are.
	given := Pair{installation + "/given.crt", installation + "/given.key"}
	if err := EnsureClient(given, ca, caKey, "someone", nil); err != nil {
		t.Fatal(err)
	}
	f, err = EnsureWith(dir, hosts, Sources{CA: Pair{installation + "/ca.crt", installation + "/ca.key"}, Serving: given, ShardClient: given, ShardName: "shard-1"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Serving != given || f.ShardClient != given {
		t.Errorf("given certificates not used: serving %v, shard client %v", f.Serving, f.ShardClient)
	}

	// A certificate that is not a CA is refused as the installation CA.
	if _, err := EnsureWith(t.TempDir(), hosts, Sources{CA: given}); err == nil {
		t.Errorf("a client certificate was accepted as the installation CA")
	}
}
