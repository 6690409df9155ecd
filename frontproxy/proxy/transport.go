package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	xhttp2 "golang.org/x/net/http2"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Timeouts of the connections to backends.
const (
	backendDialTimeout     = 5 * time.Second
	backendReadIdleTimeout = 10 * time.Second
	backendPingTimeout     = 3 * time.Second
)

// Transports reach one kind of backend over TLS: with the proxy's client
// certificate (requests whose user the proxy asserts in identity headers)
// and without it (requests that carry their own bearer token, which the
// backend checks itself), each over HTTP/2 and, for protocol upgrades such
// as exec and port-forward, over HTTP/1.1.
type Transports struct {
	withCert, withCertHTTP1 http.RoundTripper
	noCert, noCertHTTP1     http.RoundTripper
}

// NewTransports returns the transports to backends whose serving
// certificates caFile verifies, presenting the client certificate in
// certFile and keyFile where the proxy asserts the user.
func NewTransports(caFile, certFile, keyFile string) (*Transports, error) {
	roots := x509.NewCertPool()
	if caFile != "" {
		data, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("reading the backend CA: %w", err)
		}
		if !roots.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("no certificate in %s", caFile)
		}
	} else {
		var err error
		if roots, err = x509.SystemCertPool(); err != nil {
			return nil, err
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the proxy's client certificate: %w", err)
	}
	mk := func(certs []tls.Certificate, http2 bool) http.RoundTripper {
		t := &http.Transport{
			Proxy:           http.ProxyFromEnvironment,
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12},
			// A shard that is gone (a pod replaced, a process killed) must
			// cost a request seconds, not the 30 s default dial timeout.
			DialContext:         (&net.Dialer{Timeout: backendDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 100,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		}
		if http2 {
			t = utilnet.SetOldTransportDefaults(t)
			h2, err := xhttp2.ConfigureTransports(t)
			if err != nil {
				return utilnet.SetTransportDefaults(t)
			}
			// Health-check a connection that has been silent for a while
			// (a watch, or a peer that vanished without closing it): a
			// dead connection is found in seconds, not after 30 s + 15 s.
			h2.ReadIdleTimeout = backendReadIdleTimeout
			h2.PingTimeout = backendPingTimeout
			return t
		}
		t.TLSClientConfig.NextProtos = []string{"http/1.1"}
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		return utilnet.SetOldTransportDefaults(t)
	}
	withCert := []tls.Certificate{cert}
	return &Transports{
		withCert:      mk(withCert, true),
		withCertHTTP1: mk(withCert, false),
		noCert:        mk(nil, true),
		noCertHTTP1:   mk(nil, false),
	}, nil
}

// roundTripper picks the transport for a request.
func (t *Transports) roundTripper(assertsUser, upgrade bool) http.RoundTripper {
	switch {
	case assertsUser && upgrade:
		return t.withCertHTTP1
	case assertsUser:
		return t.withCert
	case upgrade:
		return t.noCertHTTP1
	}
	return t.noCert
}
