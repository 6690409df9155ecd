package serviceaccount

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"k8s.io/client-go/util/keyutil"
)

func TestEnsureSigningKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	first, err := EnsureSigningKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, SigningKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	again, err := EnsureSigningKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(first.Public(), again.Public()) {
		t.Error("a second start created a new key instead of reusing the first")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want only %s", len(entries), SigningKeyFile)
	}
}

func TestEnsureSigningKeyConcurrently(t *testing.T) {
	dir := t.TempDir()
	keys := make([]any, 4)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := EnsureSigningKey(dir)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k.Public()
		})
	}
	wg.Wait()
	for i := range keys {
		if !reflect.DeepEqual(keys[0], keys[i]) {
			t.Fatalf("racing starts got different keys")
		}
	}
}

func TestLoadKeys(t *testing.T) {
	dir := t.TempDir()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := keyutil.MarshalPrivateKeyToPEM(ec)
	if err != nil {
		t.Fatal(err)
	}
	ecFile := filepath.Join(dir, "ec.key")
	garbage := filepath.Join(dir, "garbage.key")
	for f, data := range map[string][]byte{ecFile: pemKey, garbage: []byte("not a key")} {
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	signer, err := LoadSigningKey(ecFile)
	if err != nil {
		t.Fatalf("loading an ECDSA key: %v", err)
	}
	pub, err := LoadPublicKeys(ecFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(pub) != 1 || !reflect.DeepEqual(pub[0], signer.Public()) {
		t.Errorf("public keys %v, want the public half of the private key", pub)
	}
	if _, err := LoadSigningKey(garbage); err == nil {
		t.Error("loading garbage as a signing key succeeded")
	}
	if _, err := LoadPublicKeys(garbage); err == nil {
		t.Error("loading garbage as public keys succeeded")
	}
	if _, err := LoadSigningKey(filepath.Join(dir, "missing")); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
