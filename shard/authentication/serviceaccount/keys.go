package serviceaccount

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/keyutil"
)

// SigningKeyFile is the name of the signing key EnsureSigningKey keeps in
// its directory.
const SigningKeyFile = "sa.key"

// signingKeyBits is the size of the RSA keys EnsureSigningKey creates. RSA
// (RS256) is what every JWT consumer supports.
const signingKeyBits = 2048

// EnsureSigningKey returns the private key in dir/sa.key, creating a new
// RSA key there when the file does not exist yet, so that tokens signed
// before a restart stay valid after it. The file is written atomically: when
// two processes race, both end up with the key of the one that wrote first.
func EnsureSigningKey(dir string) (crypto.Signer, error) {
	file := filepath.Join(dir, SigningKeyFile)
	key, err := LoadSigningKey(file)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := writeNewKey(dir, file); err != nil {
		return nil, err
	}
	return LoadSigningKey(file)
}

// EnsureSigningKeyAsync is EnsureSigningKey in a goroutine: making a new
// RSA key takes 50-200 ms, which a starting shard spends on other work.
// The function it returns waits for the key.
func EnsureSigningKeyAsync(dir string) func() (crypto.Signer, error) {
	done := make(chan struct{})
	var key crypto.Signer
	var err error
	go func() {
		defer close(done)
		key, err = EnsureSigningKey(dir)
	}()
	return func() (crypto.Signer, error) {
		<-done
		return key, err
	}
}

// writeNewKey writes a new RSA key to file unless file exists. The key goes
// to a temporary file first and is hard-linked into place, which fails
// instead of overwriting a key another process created meanwhile.
func writeNewKey(dir, file string) error {
	key, err := rsa.GenerateKey(rand.Reader, signingKeyBits)
	if err != nil {
		return fmt.Errorf("generating the service account signing key: %w", err)
	}
	data, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return fmt.Errorf("encoding the service account signing key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, SigningKeyFile+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing the service account signing key: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := os.Link(tmp.Name(), file); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}

// LoadSigningKey reads a PEM-encoded RSA or ECDSA (P-256, P-384, P-521)
// private key. An error for a missing file wraps os.ErrNotExist.
func LoadSigningKey(file string) (crypto.Signer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the service account signing key: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(data)
	if err != nil {
		return nil, fmt.Errorf("reading the service account signing key %s: %w", file, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("service account signing key %s: %T cannot sign", file, key)
	}
	if _, err := algorithmFor(signer.Public()); err != nil {
		return nil, fmt.Errorf("service account signing key %s: %w", file, err)
	}
	return signer, nil
}

// LoadPublicKeys reads the RSA and ECDSA public keys of PEM files holding
// public keys, private keys or both, as kube-apiserver's
// --service-account-key-file does.
func LoadPublicKeys(files ...string) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for _, f := range files {
		found, err := keyutil.PublicKeysFromFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading service account verification keys: %w", err)
		}
		for _, k := range found {
			if _, err := algorithmFor(k); err != nil {
				return nil, fmt.Errorf("service account verification key in %s: %w", f, err)
			}
			keys = append(keys, k)
		}
	}
	return keys, nil
}
