package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// testKeys are generated once per test binary: RSA generation is slow.
var testKeys = sync.OnceValue(func() map[string]crypto.Signer {
	keys := map[string]crypto.Signer{}
	for name, gen := range map[string]func() (crypto.Signer, error){
		"rsa":       func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 2048) },
		"rsa-other": func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 2048) },
		"p256":      func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) },
		"p384":      func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P384(), rand.Reader) },
		"p521":      func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P521(), rand.Reader) },
	} {
		k, err := gen()
		if err != nil {
			panic(err)
		}
		keys[name] = k
	}
	return keys
})

func mustSigner(t *testing.T, key crypto.Signer) *signer {
	t.Helper()
	s, err := newSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustVerifier(t *testing.T, keys ...crypto.Signer) *verifier {
	t.Helper()
	var pub []crypto.PublicKey
	for _, k := range keys {
		pub = append(pub, k.Public())
	}
	v, err := newVerifier(pub, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func verifyToken(v *verifier, token string) error {
	jws, _, err := parseToken(token)
	if err != nil {
		return err
	}
	return v.verify(jws)
}

func TestSignAndVerify(t *testing.T) {
	keys := testKeys()
	for _, name := range []string{"rsa", "p256", "p384", "p521"} {
		t.Run(name, func(t *testing.T) {
			s := mustSigner(t, keys[name])
			token, err := s.sign(map[string]string{"iss": "me"})
			if err != nil {
				t.Fatal(err)
			}
			jws, payload, err := parseToken(token)
			if err != nil {
				t.Fatal(err)
			}
			if string(payload) != `{"iss":"me"}` {
				t.Errorf("payload %s", payload)
			}
			// The header is kube-apiserver's: alg and kid, nothing else.
			var h map[string]any
			raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
			if err := json.Unmarshal(raw, &h); err != nil {
				t.Fatal(err)
			}
			if len(h) != 2 || h["alg"] != string(s.alg) || h["kid"] != s.kid {
				t.Errorf("header %v, want alg %s and kid %s only", h, s.alg, s.kid)
			}
			if err := mustVerifier(t, keys["rsa-other"], keys[name]).verify(jws); err != nil {
				t.Errorf("verifying with the signing key among others: %v", err)
			}
			if err := mustVerifier(t, keys["rsa-other"]).verify(jws); err == nil {
				t.Error("a token verified with another key")
			}
		})
	}
}

func TestVerifyRefusesTampering(t *testing.T) {
	key := testKeys()["p256"]
	s := mustSigner(t, key)
	v := mustVerifier(t, key)
	token, err := s.sign(map[string]string{"sub": "alice"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	enc := base64.RawURLEncoding.EncodeToString

	for name, tampered := range map[string]string{
		"changed payload":   parts[0] + "." + enc([]byte(`{"sub":"bob"}`)) + "." + parts[2],
		"alg none":          enc([]byte(`{"alg":"none"}`)) + "." + parts[1] + ".",
		"alg HS256":         enc([]byte(`{"alg":"HS256","kid":"`+s.kid+`"}`)) + "." + parts[1] + "." + parts[2],
		"other kid":         enc([]byte(`{"alg":"ES256","kid":"other"}`)) + "." + parts[1] + "." + parts[2],
		"critical header":   enc([]byte(`{"alg":"ES256","crit":["exp"]}`)) + "." + parts[1] + "." + parts[2],
		"unencoded payload": enc([]byte(`{"alg":"ES256","crit":["b64"],"b64":false}`)) + "." + parts[1] + "." + parts[2],
		"truncated sig":     parts[0] + "." + parts[1] + "." + parts[2][:10],
		"malformed header":  "!!!." + parts[1] + "." + parts[2],
		"signature garbage": parts[0] + "." + parts[1] + ".AAAA",
		"line break":        parts[0] + "." + parts[1][:5] + "\n" + parts[1][5:] + "." + parts[2],
		"unused bits set":   parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-1] + string(flipLowBits(parts[2][len(parts[2])-1])),
	} {
		t.Run(name, func(t *testing.T) {
			if err := verifyToken(v, tampered); err == nil {
				t.Error("tampered token verified")
			}
		})
	}
}

func TestParseTokenRefusesNonJWTs(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	for _, token := range []string{"", "static-token", "a.b", "a.b.c.d", "abc.!!!.def", "e30.bm90IGpzb24.sig", strings.Repeat("a", maxTokenBytes) + ".e30.x",
		enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`{"iss":"x"}`)) + ".",
		enc([]byte(`{"alg":"HS256"}`)) + "." + enc([]byte(`{"iss":"x"}`)) + "." + enc([]byte("sig")),
	} {
		if _, _, err := parseToken(token); err != errNotJWT {
			t.Errorf("parseToken(%.20q) = %v, want errNotJWT", token, err)
		}
	}
}

func TestKeyIDIsKubernetes(t *testing.T) {
	// kube-apiserver's key ID of this fixed P-256 public key, as computed
	// by its keyIDFromPublicKey: base64url(sha256(PKIX DER)).
	pub := &ecdsa.PublicKey{Curve: elliptic.P256()}
	pub.X, pub.Y = elliptic.P256().Params().Gx, elliptic.P256().Params().Gy
	kid, err := keyID(pub)
	if err != nil {
		t.Fatal(err)
	}
	if want := "XNJS-wzokyQ2-vjM0QQJgbie5K1rn-niorfnGqyyfNM"; kid != want {
		t.Errorf("key ID %q, want %q", kid, want)
	}
}

func TestWeakRSAKeyRefused(t *testing.T) {
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newSigner(weak); err == nil {
		t.Error("a 1024-bit RSA key was accepted")
	}
}

// FuzzParseAndVerify feeds arbitrary bearer tokens to the parser and the
// verifier: nothing panics, and only a token the signer produced verifies.
func FuzzParseAndVerify(f *testing.F) {
	key := testKeys()["p256"]
	s, err := newSigner(key)
	if err != nil {
		f.Fatal(err)
	}
	pub, err := newVerifier([]crypto.PublicKey{key.Public(), testKeys()["rsa"].Public()}, nil)
	if err != nil {
		f.Fatal(err)
	}
	signed := map[string]bool{}
	enc := base64.RawURLEncoding.EncodeToString
	for _, claims := range []string{`{"iss":"kubernetes/serviceaccount"}`, `{"iss":"https://tessera","sub":"system:serviceaccount:default:sa"}`} {
		var c map[string]any
		_ = json.Unmarshal([]byte(claims), &c)
		token, err := s.sign(c)
		if err != nil {
			f.Fatal(err)
		}
		signed[token] = true
		parts := strings.Split(token, ".")
		f.Add(token)
		f.Add(token[:len(token)-3])
		f.Add(parts[0] + "." + enc([]byte(`{"iss":"other"}`)) + "." + parts[2])
		f.Add(enc([]byte(`{"alg":"none"}`)) + "." + parts[1] + ".")
		f.Add(enc([]byte(`{"alg":"RS256","kid":"`+s.kid+`"}`)) + "." + parts[1] + "." + parts[2])
		f.Add(enc([]byte(`{"alg":"ES256","crit":["b64"],"b64":false}`)) + "." + parts[1] + "." + parts[2])
	}
	f.Add("")
	f.Add("..")
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, token string) {
		jws, payload, err := parseToken(token)
		if err != nil {
			if err != errNotJWT {
				t.Fatalf("parseToken error %v, want errNotJWT", err)
			}
			return
		}
		if !json.Valid(payload) {
			t.Fatalf("parseToken returned a payload that is not JSON: %q", payload)
		}
		if pub.verify(jws) == nil && !signed[token] {
			t.Fatalf("a token the signer did not produce verified: %q", token)
		}
	})
}

// flipLowBits returns another base64url character that decodes to the same
// bytes when c is the last character of an unpadded part whose length
// leaves unused bits (Go's lenient decoder ignores them), or c itself.
func flipLowBits(c byte) byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, c)
	if i < 0 {
		return c
	}
	return alphabet[i^1]
}
