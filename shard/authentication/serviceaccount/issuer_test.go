package serviceaccount

import (
	"crypto"
	"encoding/json"
	"errors"
	"strings"
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

// TestPendingKey pins what a key still being made does: tokens wait for it
// and then sign and verify with it, the extra keys verify too, and an error
// getting the key is the error of every token, signed or verified.
func TestPendingKey(t *testing.T) {
	keys := testKeys()
	release := make(chan struct{})
	pending := func() (crypto.Signer, error) {
		<-release
		return keys["rsa"], nil
	}
	issuer, err := NewPendingIssuer(pending, "https://tessera", nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := newVerifier([]crypto.PublicKey{keys["p256"].Public()}, issuer.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "default", UID: "u"}}
	tokens := make(chan string, 1)
	go func() {
		token, err := issuer.Legacy("c", sa, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}})
		if err != nil {
			t.Error(err)
		}
		tokens <- token
	}()
	select {
	case <-tokens:
		t.Fatal("a token was signed before the key was there")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := verifyToken(v, <-tokens); err != nil {
		t.Errorf("a token of the pending key does not verify: %v", err)
	}
	other, err := mustSigner(t, keys["p256"]).sign(map[string]string{"iss": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyToken(v, other); err != nil {
		t.Errorf("a token of the extra key does not verify: %v", err)
	}

	broken, err := NewPendingIssuer(func() (crypto.Signer, error) { return nil, errors.New("disk full") }, "https://tessera", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := broken.Legacy("c", sa, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("signing with a key that could not be made: %v", err)
	}
	bv, err := newVerifier(nil, broken.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyToken(bv, other); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("verifying without the key: %v", err)
	}
}
