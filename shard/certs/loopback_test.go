package certs

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
)

// TestLoopbackCertificate serves the loopback certificate and connects as
// the loopback client does: trusting only the PEM it was given, under the
// loopback server name, over real TLS.
func TestLoopbackCertificate(t *testing.T) {
	certPEM, keyPEM, err := loopbackCertificate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	defer srv.Close()

	get := func(serverName string) error {
		cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: certPEM, ServerName: serverName}}
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			return err
		}
		resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	if err := get(server.LoopbackClientServerNameOverride); err != nil {
		t.Errorf("the loopback client cannot connect: %v", err)
	}
	if err := get("other-name"); err == nil {
		t.Errorf("a client for another server name connected")
	}
	if !pair.Leaf.NotAfter.After(time.Now().Add(3 * 365 * 24 * time.Hour)) {
		t.Errorf("the certificate expires at %s, before the three years of k8s.io/apiserver's", pair.Leaf.NotAfter)
	}
}
