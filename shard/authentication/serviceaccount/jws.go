package serviceaccount

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	jose "github.com/go-jose/go-jose/v4"
)

// Service account tokens are JWS (RFC 7515) in compact serialization,
// signed and verified with go-jose: RS256 for RSA keys of 2048 bits or
// more, ES256/384/512 for ECDSA keys, with a key ID derived from the public
// key as kube-apiserver derives it.

// maxTokenBytes bounds what is parsed; real tokens are about 1 KB.
const maxTokenBytes = 64 << 10

// errNotJWT says a bearer token is not a JWT at all, so it belongs to
// another authenticator.
var errNotJWT = errors.New("not a JWT")

// algorithms are the only signature algorithms a token may name; go-jose
// refuses any other (none, HS256, ...) while parsing.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512}

// algorithmFor returns the algorithm tokens signed with key's private half
// use.
func algorithmFor(key crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", fmt.Errorf("RSA keys must have at least 2048 bits, this one has %d", k.N.BitLen())
		}
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("unsupported elliptic curve %s", k.Curve.Params().Name)
	}
	return "", fmt.Errorf("unsupported key type %T", key)
}

// keyID is the "kid" of tokens signed by key's private half: the unpadded
// base64url SHA-256 of the DER-encoded public key, as kube-apiserver and kcp
// compute it.
func keyID(key crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return "", fmt.Errorf("encoding public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// signer signs tokens with one private key.
type signer struct {
	signer jose.Signer
	public crypto.PublicKey
	alg    jose.SignatureAlgorithm
	kid    string
}

func newSigner(key crypto.Signer) (*signer, error) {
	alg, err := algorithmFor(key.Public())
	if err != nil {
		return nil, err
	}
	kid, err := keyID(key.Public())
	if err != nil {
		return nil, err
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		return nil, fmt.Errorf("building the token signer: %w", err)
	}
	return &signer{signer: s, public: key.Public(), alg: alg, kid: kid}, nil
}

// sign returns the compact serialization of a JWS over claims.
func (s *signer) sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("encoding claims: %w", err)
	}
	obj, err := s.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("signing token: %w", err)
	}
	return obj.CompactSerialize()
}

// verificationKey is a public key tokens may be signed with.
type verificationKey struct {
	key crypto.PublicKey
	alg jose.SignatureAlgorithm
	kid string
}

// verifier checks token signatures against a set of public keys.
type verifier struct {
	// keys returns the keys, once a pending one is there.
	keys func() ([]verificationKey, error)
}

// newVerifier returns a verifier of keys and, if pending is not nil, of the
// key it returns; it is called, and waited for, at the first verification.
func newVerifier(keys []crypto.PublicKey, pending func() (crypto.PublicKey, error)) (*verifier, error) {
	if len(keys) == 0 && pending == nil {
		return nil, errors.New("no service account verification keys")
	}
	verificationKeys := func(keys []crypto.PublicKey) ([]verificationKey, error) {
		var out []verificationKey
		for _, k := range keys {
			alg, err := algorithmFor(k)
			if err != nil {
				return nil, err
			}
			kid, err := keyID(k)
			if err != nil {
				return nil, err
			}
			out = append(out, verificationKey{key: k, alg: alg, kid: kid})
		}
		return out, nil
	}
	known, err := verificationKeys(keys)
	if err != nil {
		return nil, err
	}
	if pending == nil {
		return &verifier{keys: func() ([]verificationKey, error) { return known, nil }}, nil
	}
	return &verifier{keys: sync.OnceValues(func() ([]verificationKey, error) {
		k, err := pending()
		if err != nil {
			return nil, err
		}
		first, err := verificationKeys([]crypto.PublicKey{k})
		if err != nil {
			return nil, err
		}
		return append(first, known...), nil
	})}, nil
}

// parseToken parses a compact JWS with one of the accepted algorithms and
// returns it with its payload, not yet verified. It returns errNotJWT for
// anything else, which is then another authenticator's business.
func parseToken(token string) (*jose.JSONWebSignature, []byte, error) {
	if len(token) > maxTokenBytes || strings.Count(token, ".") != 2 || !canonical(token) {
		return nil, nil, errNotJWT
	}
	jws, err := jose.ParseSigned(token, algorithms)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, nil, errNotJWT
	}
	// Tokens are signed over their base64url payload and name no critical
	// extensions; go-jose would take an unencoded (b64: false) payload.
	extra := jws.Signatures[0].Protected.ExtraHeaders
	if _, ok := extra["b64"]; ok {
		return nil, nil, errNotJWT
	}
	if _, ok := extra["crit"]; ok {
		return nil, nil, errNotJWT
	}
	payload := jws.UnsafePayloadWithoutVerification()
	if !json.Valid(payload) {
		return nil, nil, errNotJWT
	}
	return jws, payload, nil
}

// canonical tells whether every part of a compact JWS is canonical unpadded
// base64url, as signers write it. Go's decoder, which go-jose uses, also
// takes line breaks and non-zero unused bits in a part's last character, so
// without this check many spellings of one token would authenticate.
func canonical(token string) bool {
	for part := range strings.SplitSeq(token, ".") {
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
		if _, err := base64.RawURLEncoding.Strict().DecodeString(part); err != nil {
			return false
		}
	}
	return true
}

// verify checks the signature of a parsed token against the keys of its
// algorithm (and key ID, if it names one).
func (v *verifier) verify(jws *jose.JSONWebSignature) error {
	h := jws.Signatures[0].Protected
	keys, err := v.keys()
	if err != nil {
		return fmt.Errorf("service account verification keys: %w", err)
	}
	tried := false
	for _, k := range keys {
		if string(k.alg) != h.Algorithm || (h.KeyID != "" && h.KeyID != k.kid) {
			continue
		}
		tried = true
		if _, err := jws.Verify(k.key); err == nil {
			return nil
		}
	}
	if !tried {
		return fmt.Errorf("no verification key for algorithm %q and key ID %q", h.Algorithm, h.KeyID)
	}
	return errors.New("invalid token signature")
}

// decodeStrict decodes JSON claims, refusing trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after claims")
	}
	return nil
}
