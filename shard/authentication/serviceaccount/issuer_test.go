package serviceaccount

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// payloadOf returns the decoded claims of a token.
func payloadOf(t *testing.T, token string) map[string]any {
	t.Helper()
	_, payload, err := parseToken(token)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestClaimsAreKcps pins the wire format of both token shapes: kcp-aware
// tools read the logical cluster from these claims.
func TestClaimsAreKcps(t *testing.T) {
	e := newEnv(t)
	sa := e.addServiceAccount("root:org", "ns", "robot", "uid-1")
	now := float64(e.clock.Now().Unix())

	bound := payloadOf(t, e.bound(t, "root:org", sa, func(bt *BoundToken) {
		bt.Secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", UID: "s-uid"}}
	}))
	want := map[string]any{
		"iss": testIssuer,
		"sub": "system:serviceaccount:ns:robot",
		"aud": []any{testIssuer},
		"exp": now + 3600,
		"nbf": now,
		"iat": now,
		"kubernetes.io": map[string]any{
			"clusterName":    "root:org",
			"namespace":      "ns",
			"serviceaccount": map[string]any{"name": "robot", "uid": "uid-1"},
			"secret":         map[string]any{"name": "s", "uid": "s-uid"},
		},
	}
	if diff := cmp.Diff(want, bound, cmpopts.IgnoreMapEntries(func(k string, _ any) bool { return k == "jti" })); diff != "" {
		t.Errorf("bound claims (-want +got):\n%s", diff)
	}
	if jti, _ := bound["jti"].(string); jti == "" {
		t.Error("bound token has no jti")
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "ns"}}
	token, err := e.issuer.Legacy("root:org", sa, secret)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{
		"iss":                                    "kubernetes/serviceaccount",
		"sub":                                    "system:serviceaccount:ns:robot",
		"kubernetes.io/serviceaccount/namespace": "ns",
		"kubernetes.io/serviceaccount/secret.name":          "robot-token",
		"kubernetes.io/serviceaccount/service-account.name": "robot",
		"kubernetes.io/serviceaccount/service-account.uid":  "uid-1",
		"kubernetes.io/serviceaccount/clusterName":          "root:org",
	}, payloadOf(t, token)); diff != "" {
		t.Errorf("legacy claims (-want +got):\n%s", diff)
	}
}

func TestIssuerRefusesIncompleteTokens(t *testing.T) {
	e := newEnv(t)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "uid"}}
	for name, bt := range map[string]BoundToken{
		"no cluster":       {ServiceAccount: sa, Audiences: testAudiences, Expiration: time.Hour},
		"wildcard cluster": {Cluster: "*", ServiceAccount: sa, Audiences: testAudiences, Expiration: time.Hour},
		"no uid":           {Cluster: "a", ServiceAccount: &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns"}}, Audiences: testAudiences, Expiration: time.Hour},
		"no audience":      {Cluster: "a", ServiceAccount: sa, Expiration: time.Hour},
		"no expiration":    {Cluster: "a", ServiceAccount: sa, Audiences: testAudiences},
		"secret no uid":    {Cluster: "a", ServiceAccount: sa, Audiences: testAudiences, Expiration: time.Hour, Secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}},
	} {
		if _, err := e.issuer.Bound(bt); err == nil {
			t.Errorf("%s: a token was issued", name)
		}
	}
	if _, err := e.issuer.Legacy("a", sa, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "other"}}); err == nil {
		t.Error("a legacy token was issued for a secret in another namespace")
	}
	if _, err := NewIssuer(testKeys()["rsa"], LegacyIssuer, nil); err == nil {
		t.Error("the legacy issuer was accepted for bound tokens")
	}
}
