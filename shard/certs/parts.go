package certs

import (
	"crypto"
	"crypto/x509"
)

// The parts of Ensure, for components with other certificates than a
// shard's (the cache server). Each creates what is missing and keeps what
// an earlier start created, as Ensure does.

// EnsureCA makes sure p holds a certificate authority and returns it.
func EnsureCA(p Pair) (*x509.Certificate, crypto.Signer, error) {
	return ensureCA(p)
}

// EnsureServing makes sure p holds a serving certificate signed by ca that
// covers every host; one that does not is replaced.
func EnsureServing(p Pair, ca *x509.Certificate, caKey crypto.Signer, hosts []string) error {
	return ensureServing(p, ca, caKey, hosts)
}

// EnsureClient makes sure p holds a client certificate signed by ca for
// user in groups.
func EnsureClient(p Pair, ca *x509.Certificate, caKey crypto.Signer, user string, groups []string) error {
	return ensureClient(p, ca, caKey, user, groups)
}
