package serviceaccount

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// This file implements the part of JWS (RFC 7515) service account tokens
// need: compact serialization, RS256 and ES256/384/512, a key ID derived
// from the public key as kube-apiserver derives it. It needs nothing beyond
// the standard library.

// maxTokenBytes bounds what is parsed; real tokens are about 1 KB.
const maxTokenBytes = 64 << 10

// errNotJWT says a bearer token is not a JWT at all, so it belongs to
// another authenticator.
var errNotJWT = errors.New("not a JWT")

// algorithm is a JWS signature algorithm.
type algorithm struct {
	name string
	hash crypto.Hash
	// ecBytes is the size of r and s in ECDSA signatures, zero for RSA.
	ecBytes int
}

// algorithmFor returns the algorithm tokens signed with key's private half
// use.
func algorithmFor(key crypto.PublicKey) (algorithm, error) {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return algorithm{}, fmt.Errorf("RSA keys must have at least 2048 bits, this one has %d", k.N.BitLen())
		}
		return algorithm{name: "RS256", hash: crypto.SHA256}, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return algorithm{name: "ES256", hash: crypto.SHA256, ecBytes: 32}, nil
		case elliptic.P384():
			return algorithm{name: "ES384", hash: crypto.SHA384, ecBytes: 48}, nil
		case elliptic.P521():
			return algorithm{name: "ES512", hash: crypto.SHA512, ecBytes: 66}, nil
		}
		return algorithm{}, fmt.Errorf("unsupported elliptic curve %s", k.Curve.Params().Name)
	}
	return algorithm{}, fmt.Errorf("unsupported key type %T", key)
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

// header is the JOSE header of a token.
type header struct {
	Algorithm string   `json:"alg"`
	KeyID     string   `json:"kid,omitempty"`
	Type      string   `json:"typ,omitempty"`
	Critical  []string `json:"crit,omitempty"`
}

// signer signs tokens with one private key.
type signer struct {
	key       crypto.Signer
	alg       algorithm
	kid       string
	encHeader string
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
	h, err := json.Marshal(header{Algorithm: alg.name, KeyID: kid})
	if err != nil {
		return nil, fmt.Errorf("encoding JOSE header: %w", err)
	}
	return &signer{key: key, alg: alg, kid: kid, encHeader: base64.RawURLEncoding.EncodeToString(h)}, nil
}

// sign returns the compact serialization of a JWS over claims.
func (s *signer) sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("encoding claims: %w", err)
	}
	input := s.encHeader + "." + base64.RawURLEncoding.EncodeToString(payload)
	h := s.alg.hash.New()
	h.Write([]byte(input))
	sig, err := s.key.Sign(rand.Reader, h.Sum(nil), s.alg.hash)
	if err != nil {
		return "", fmt.Errorf("signing token: %w", err)
	}
	if s.alg.ecBytes > 0 {
		if sig, err = asn1ToRaw(sig, s.alg.ecBytes); err != nil {
			return "", err
		}
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// asn1ToRaw converts an ASN.1 ECDSA signature to JWS's r||s form.
func asn1ToRaw(sig []byte, size int) ([]byte, error) {
	var parsed struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(sig, &parsed)
	if err != nil {
		return nil, fmt.Errorf("decoding ECDSA signature: %w", err)
	}
	if len(rest) > 0 {
		return nil, errors.New("decoding ECDSA signature: trailing data")
	}
	out := make([]byte, 2*size)
	parsed.R.FillBytes(out[:size])
	parsed.S.FillBytes(out[size:])
	return out, nil
}

// verificationKey is a public key tokens may be signed with.
type verificationKey struct {
	key crypto.PublicKey
	alg algorithm
	kid string
}

// verifier checks token signatures against a set of public keys.
type verifier struct {
	keys []verificationKey
}

func newVerifier(keys []crypto.PublicKey) (*verifier, error) {
	if len(keys) == 0 {
		return nil, errors.New("no service account verification keys")
	}
	v := &verifier{}
	for _, k := range keys {
		alg, err := algorithmFor(k)
		if err != nil {
			return nil, err
		}
		kid, err := keyID(k)
		if err != nil {
			return nil, err
		}
		v.keys = append(v.keys, verificationKey{key: k, alg: alg, kid: kid})
	}
	return v, nil
}

// splitToken splits a compact JWS and decodes its payload without checking
// the signature. It returns errNotJWT for anything that is not shaped like
// a JWS.
func splitToken(token string) (parts [3]string, payload []byte, err error) {
	if len(token) > maxTokenBytes || strings.Count(token, ".") != 2 {
		return parts, nil, errNotJWT
	}
	copy(parts[:], strings.Split(token, "."))
	payload, err = base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !json.Valid(payload) {
		return parts, nil, errNotJWT
	}
	return parts, payload, nil
}

// verify checks the signature of a token split by splitToken.
func (v *verifier) verify(parts [3]string) error {
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return fmt.Errorf("malformed token header: %w", err)
	}
	var h header
	if err := json.Unmarshal(rawHeader, &h); err != nil {
		return fmt.Errorf("malformed token header: %w", err)
	}
	if len(h.Critical) > 0 {
		return fmt.Errorf("unsupported critical header parameters %q", h.Critical)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("malformed token signature: %w", err)
	}
	input := []byte(parts[0] + "." + parts[1])
	tried := false
	for _, k := range v.keys {
		if k.alg.name != h.Algorithm || (h.KeyID != "" && h.KeyID != k.kid) {
			continue
		}
		tried = true
		if verifySignature(k, input, sig) {
			return nil
		}
	}
	if !tried {
		return fmt.Errorf("no verification key for algorithm %q and key ID %q", h.Algorithm, h.KeyID)
	}
	return errors.New("invalid token signature")
}

func verifySignature(k verificationKey, input, sig []byte) bool {
	h := k.alg.hash.New()
	h.Write(input)
	digest := h.Sum(nil)
	switch pub := k.key.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(pub, k.alg.hash, digest, sig) == nil
	case *ecdsa.PublicKey:
		if len(sig) != 2*k.alg.ecBytes {
			return false
		}
		r := new(big.Int).SetBytes(sig[:k.alg.ecBytes])
		s := new(big.Int).SetBytes(sig[k.alg.ecBytes:])
		return ecdsa.Verify(pub, digest, r, s)
	}
	return false
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
