package integration

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/tessera-dev/tessera/test/integration/framework"
)

// TestImpersonationIsDecidedPerCluster is the reproduction of the
// impersonation leak: an admin of a-ws impersonates the admin of b-ws in
// a-ws, where that is allowed, and then at once in b-ws, where it is not.
// Upstream's constrained impersonation remembers its decisions for ten
// seconds under a key without the logical cluster; the second request must
// still be refused.
func TestImpersonationIsDecidedPerCluster(t *testing.T) {
	tn := startTenants(t)
	secrets := rawRequest{method: http.MethodGet, path: "/api/v1/namespaces/default/secrets", header: impersonating("user-b", "team-b")}
	newSecret := rawRequest{method: http.MethodPost, path: "/api/v1/namespaces/default/secrets", header: impersonating("user-b", "team-b"),
		contentType: "application/json", body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"planted"},"stringData":{"k":"v"}}`}

	for _, victim := range []string{"root:b-ws", string(tn.b)} {
		if r := tn.do(t, attackerToken, victim, secrets); r.code != http.StatusForbidden {
			t.Fatalf("user-a impersonating user-b in %s, unprimed: %d %s", victim, r.code, r.body)
		}
		for _, own := range []string{"root:a-ws", string(tn.a)} {
			// Allowed as impersonation, then refused for user-b in a-ws.
			r := tn.do(t, attackerToken, own, secrets)
			if r.code != http.StatusForbidden || !strings.Contains(r.status.Message, `User "user-b"`) {
				t.Fatalf("user-a impersonating user-b in its own %s: want 403 for user-b, got %d %s", own, r.code, r.body)
			}
			if r := tn.do(t, attackerToken, victim, secrets); r.code != http.StatusForbidden || leaksVictimData(r.body) {
				t.Errorf("user-a impersonating user-b in %s right after %s: %d %s", victim, own, r.code, r.body)
			}
			tn.do(t, attackerToken, own, newSecret)
			if r := tn.do(t, attackerToken, victim, newSecret); r.code != http.StatusForbidden {
				t.Errorf("user-a creating a Secret as user-b in %s right after %s: %d %s", victim, own, r.code, r.body)
			}
		}
	}
	if _, err := kube(t, tn.s, tn.b).CoreV1().Secrets("default").Get(t.Context(), "planted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Secret was planted in b-ws: %v", err)
	}
}

// TestDotSegmentsAreRefusedBeforeStorage: "." and ".." (plain or
// percent-encoded) where a namespace or a name goes are refused with 400 or
// 404, and no answer shows how keys are laid out in etcd.
func TestDotSegmentsAreRefusedBeforeStorage(t *testing.T) {
	s := framework.StartShard(t)
	createCluster(t, s, "x")
	tn := &tenants{s: s}
	admin := func(r rawRequest) rawResponse {
		t.Helper()
		cfg := s.Config("")
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return tn.doWith(t, client, "x", r)
	}
	patch := `{"data":{"k":"v"}}`
	for _, seg := range []string{"..", "%2e%2e", "%2E%2E", ".", "%2e"} {
		for _, r := range []rawRequest{
			{method: http.MethodPatch, path: "/api/v1/namespaces/" + seg + "/configmaps/y", body: patch, contentType: "application/merge-patch+json"},
			{method: http.MethodPatch, path: "/api/v1/namespaces/default/configmaps/" + seg, body: patch, contentType: "application/merge-patch+json"},
			{method: http.MethodGet, path: "/api/v1/namespaces/" + seg + "/configmaps/y"},
			{method: http.MethodGet, path: "/api/v1/namespaces/" + seg + "/configmaps"},
			{method: http.MethodDelete, path: "/api/v1/namespaces/" + seg + "/configmaps/y"},
			{method: http.MethodPut, path: "/api/v1/namespaces/" + seg + "/configmaps/y", contentType: "application/json",
				body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y","namespace":".."}}`},
			{method: http.MethodPost, path: "/api/v1/namespaces/" + seg + "/configmaps", contentType: "application/json",
				body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"y"}}`},
			{method: http.MethodGet, path: "/api/v1/namespaces/" + seg},
			{method: http.MethodPatch, path: "/api/v1/namespaces/" + seg + "/status", body: patch, contentType: "application/merge-patch+json"},
		} {
			resp := admin(r)
			if (resp.code != http.StatusBadRequest && resp.code != http.StatusNotFound) ||
				strings.Contains(resp.body, "invalid key") || strings.Contains(resp.body, "/configmaps/") || strings.Contains(resp.body, "/registry") {
				t.Errorf("%s %s: %d %s", r.method, r.path, resp.code, resp.body)
			}
		}
	}
}
