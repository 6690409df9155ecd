package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hookCall is one AdmissionReview a test webhook received.
type hookCall struct {
	path      string
	name      string
	namespace string
	operation admissionv1.Operation
	dryRun    bool
	user      string
	labels    map[string]string
}

// hookServer is an HTTPS admission webhook in the test process, with its
// own CA (caBundle). Its paths:
//
//	/label/<key>   adds the label <key>=set (a JSON patch), allows
//	/deny          refuses with the message "denied by the test webhook"
//	/allow         allows without a change
//	/slow          answers after three seconds
type hookServer struct {
	t      *testing.T
	srv    *httptest.Server
	caPEM  []byte
	mu     sync.Mutex
	calls  []hookCall
	closed bool
}

func startHookServer(t *testing.T) *hookServer {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test webhook CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	h := &hookServer{t: t, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	h.srv.StartTLS()
	t.Cleanup(h.srv.Close)
	return h
}

// url returns the webhook URL of path.
func (h *hookServer) url(path string) string { return h.srv.URL + path }

func (h *hookServer) serve(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	req := review.Request
	var meta struct {
		metav1.ObjectMeta `json:"metadata"`
	}
	_ = json.Unmarshal(req.Object.Raw, &meta)
	h.mu.Lock()
	h.calls = append(h.calls, hookCall{
		path: r.URL.Path, name: req.Name, namespace: req.Namespace, operation: req.Operation,
		dryRun: req.DryRun != nil && *req.DryRun, user: req.UserInfo.Username, labels: meta.Labels,
	})
	h.mu.Unlock()

	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	switch {
	case strings.HasPrefix(r.URL.Path, "/label/"):
		key := strings.TrimPrefix(r.URL.Path, "/label/")
		var patch []map[string]any
		if meta.Labels == nil {
			patch = append(patch, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{}})
		}
		patch = append(patch, map[string]any{"op": "add", "path": "/metadata/labels/" + key, "value": "set"})
		resp.Patch, _ = json.Marshal(patch)
		pt := admissionv1.PatchTypeJSONPatch
		resp.PatchType = &pt
	case r.URL.Path == "/deny":
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: http.StatusForbidden, Message: "denied by the test webhook"}
	case r.URL.Path == "/slow":
		time.Sleep(3 * time.Second)
	}
	review.Response = resp
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// callsFor returns the calls to path for objects named name.
func (h *hookServer) callsFor(path, name string) []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookCall
	for _, c := range h.calls {
		if c.path == path && c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// callsNamed returns every call, on any path, for objects named name.
func (h *hookServer) callsNamed(name string) []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookCall
	for _, c := range h.calls {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}
