package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/tessera-dev/tessera/pkg/logicalcluster"
	"github.com/tessera-dev/tessera/shard/options"
	"github.com/tessera-dev/tessera/test/integration/framework"
)

// signer is a CA that signs client certificates in tests.
type signer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newSigner(t *testing.T, name string) *signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{cert: cert, key: key}
}

// loadSigner reads a CA the shard created.
func loadSigner(t *testing.T, certFile, keyFile string) *signer {
	t.Helper()
	certs, err := certutil.CertsFromFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := keyutil.PrivateKeyFromFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{cert: certs[0], key: key.(*ecdsa.PrivateKey)}
}

// writeCA writes the CA certificate to a file and returns its path.
func (s *signer) writeCA(t *testing.T) string {
	t.Helper()
	data, err := certutil.EncodeCertificates(s.cert)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// clientCert returns a TLS client certificate for cn signed by the CA.
func (s *signer) clientCert(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, s.cert, key.Public(), s.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestAuthnRequestHeader authenticates requests forwarded by a front-proxy:
// its client certificate is signed by the request-header CA and has an
// allowed name, and the user comes from X-Remote-* headers.
func TestAuthnRequestHeader(t *testing.T) {
	proxyCA := newSigner(t, "front-proxy-ca")
	s := framework.StartShard(t, func(o *options.Options) {
		o.Authentication.RequestHeader.ClientCAFile = proxyCA.writeCA(t)
		o.Authentication.RequestHeader.AllowedNames = []string{"front-proxy"}
	})
	const a = logicalcluster.Name("authn-proxy")
	createCluster(t, s, a)
	shardCAFile := filepath.Join(s.Options.RootDirectory, "certs", "ca.crt")
	shardCA := loadSigner(t, shardCAFile, filepath.Join(s.Options.RootDirectory, "certs", "ca.key"))
	roots, err := certutil.NewPool(shardCAFile)
	if err != nil {
		t.Fatal(err)
	}

	// whoami posts a SelfSubjectReview to cluster a with the given client
	// certificate (if any) and headers, and returns the status code and the
	// user.
	whoami := func(t *testing.T, cert *tls.Certificate, headers http.Header) (int, authenticationv1.UserInfo) {
		t.Helper()
		tlsConfig := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		if cert != nil {
			tlsConfig.Certificates = []tls.Certificate{*cert}
		}
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: 30 * time.Second}
		defer client.CloseIdleConnections()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+"/clusters/"+string(a)+"/apis/authentication.k8s.io/v1/selfsubjectreviews",
			strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for k, vs := range headers {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var review authenticationv1.SelfSubjectReview
		if resp.StatusCode == http.StatusCreated {
			if err := json.Unmarshal(body, &review); err != nil {
				t.Fatalf("decoding %s: %v", body, err)
			}
		}
		return resp.StatusCode, review.Status.UserInfo
	}
	// The front-proxy forwards a shard admin, so that any authorizer lets
	// the review through.
	forwarded := http.Header{
		"X-Remote-User":         {"alice"},
		"X-Remote-Group":        {"system:masters", "team"},
		"X-Remote-Extra-Scopes": {"cluster:" + string(a)},
	}

	t.Run("the front-proxy forwards a user", func(t *testing.T) {
		cert := proxyCA.clientCert(t, "front-proxy")
		code, u := whoami(t, &cert, forwarded)
		if code != http.StatusCreated {
			t.Fatalf("status %d, want 201", code)
		}
		if u.Username != "alice" || !slices.Equal(u.Groups, []string{"system:masters", "team", "system:authenticated"}) {
			t.Errorf("user %q groups %q", u.Username, u.Groups)
		}
		if got := u.Extra["scopes"]; len(got) != 1 || got[0] != "cluster:"+string(a) {
			t.Errorf("extra %v", u.Extra)
		}
	})

	t.Run("a request-header certificate with a name that is not allowed", func(t *testing.T) {
		cert := proxyCA.clientCert(t, "intruder")
		if code, u := whoami(t, &cert, forwarded); code != http.StatusUnauthorized {
			t.Errorf("status %d as %q, want 401", code, u.Username)
		}
	})

	t.Run("the allowed name signed by an unknown CA", func(t *testing.T) {
		cert := newSigner(t, "rogue-ca").clientCert(t, "front-proxy")
		if code, u := whoami(t, &cert, forwarded); code != http.StatusUnauthorized {
			t.Errorf("status %d as %q, want 401", code, u.Username)
		}
	})

	t.Run("headers without a client certificate", func(t *testing.T) {
		if code, u := whoami(t, nil, forwarded); code != http.StatusUnauthorized {
			t.Errorf("status %d as %q, want 401", code, u.Username)
		}
	})

	t.Run("headers of an ordinary client are ignored", func(t *testing.T) {
		cert := shardCA.clientCert(t, "bob")
		code, u := whoami(t, &cert, http.Header{"X-Remote-User": {"alice"}, "X-Remote-Group": {"system:masters"}})
		if code == http.StatusUnauthorized || u.Username == "alice" || slices.Contains(u.Groups, "system:masters") {
			t.Errorf("status %d as %q in %q: an ordinary client posed as someone else", code, u.Username, u.Groups)
		}
	})
}
