// Package certs creates and keeps the shard's certificate authority, its
// serving certificate and the admin client certificate under the root
// directory. A later start reuses what an earlier one created.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Pair names a certificate file and its key file.
type Pair struct {
	CertFile string
	KeyFile  string
}

// Files are the certificate files of a shard.
type Files struct {
	CA      Pair
	Serving Pair
	Admin   Pair
	// KCPAdmin is the client certificate of kcp's admin user, kcp-admin in
	// group system:kcp:admin: full access through the bootstrap RBAC
	// policy, but not a shard admin (system:masters).
	KCPAdmin Pair
	// ShardClient is the client certificate the shard presents to other
	// shards and the cache server: a shard admin (system:masters).
	ShardClient Pair
}

// Sources are certificates given rather than generated; a zero Pair is
// generated under the directory.
type Sources struct {
	// CA is the installation CA: it signs every certificate generated, and
	// is the CA of Files. Its key is needed.
	CA Pair
	// Serving is used as is.
	Serving Pair
	// ShardClient is used as is.
	ShardClient Pair
	// ShardName names the generated shard client certificate's user,
	// ShardUserPrefix+ShardName.
	ShardName string
}

// ShardUserPrefix prefixes the user of a shard's generated client
// certificate.
const ShardUserPrefix = "system:shard:"

// AdminUser is the user name of the admin client certificate.
const AdminUser = "shard-admin"

// AdminGroup is the group of the admin client certificate.
const AdminGroup = "system:masters"

// KCPAdminUser and KCPAdminGroup are the user and group of kcp's admin, the
// user of the admin kubeconfig's root and base contexts.
const (
	KCPAdminUser  = "kcp-admin"
	KCPAdminGroup = "system:kcp:admin"
)

const validity = 10 * 365 * 24 * time.Hour

// Ensure makes sure dir holds a CA, a serving certificate for the given
// hosts and an admin client certificate, creating what is missing. A serving
// certificate that does not cover every host is replaced.
func Ensure(dir string, hosts []string) (Files, error) {
	return EnsureWith(dir, hosts, Sources{})
}

// EnsureWith is Ensure with certificates from elsewhere: an installation CA
// that replaces the generated one, and a serving and shard client
// certificate used as they are. What it generates is signed by the CA and
// kept in dir; one signed by another CA (generated before the installation
// CA was given) is replaced.
func EnsureWith(dir string, hosts []string, src Sources) (Files, error) {
	f := Files{
		CA:      Pair{filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")},
		Serving: Pair{filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")},
		Admin:   Pair{filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key")},

		KCPAdmin:    Pair{filepath.Join(dir, "kcp-admin.crt"), filepath.Join(dir, "kcp-admin.key")},
		ShardClient: Pair{filepath.Join(dir, "shard-client.crt"), filepath.Join(dir, "shard-client.key")},
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return f, err
	}
	var (
		ca    *x509.Certificate
		caKey crypto.Signer
		err   error
	)
	if src.CA != (Pair{}) {
		f.CA = src.CA
		ca, caKey, err = load(src.CA)
		if err == nil && !ca.IsCA {
			err = fmt.Errorf("%s is not a CA certificate", src.CA.CertFile)
		}
	} else {
		ca, caKey, err = ensureCA(f.CA)
	}
	if err != nil {
		return f, fmt.Errorf("certificate authority: %w", err)
	}
	if src.Serving != (Pair{}) {
		f.Serving = src.Serving
	} else if err := ensureServing(f.Serving, ca, caKey, hosts); err != nil {
		return f, fmt.Errorf("serving certificate: %w", err)
	}
	if src.ShardClient != (Pair{}) {
		f.ShardClient = src.ShardClient
	} else if src.ShardName != "" {
		if err := ensureClient(f.ShardClient, ca, caKey, ShardUserPrefix+src.ShardName, []string{AdminGroup}); err != nil {
			return f, fmt.Errorf("shard client certificate: %w", err)
		}
	}
	if err := ensureClient(f.Admin, ca, caKey, AdminUser, []string{AdminGroup}); err != nil {
		return f, fmt.Errorf("admin client certificate: %w", err)
	}
	if err := ensureClient(f.KCPAdmin, ca, caKey, KCPAdminUser, []string{KCPAdminGroup}); err != nil {
		return f, fmt.Errorf("kcp-admin client certificate: %w", err)
	}
	return f, nil
}

func exists(p Pair) (bool, error) {
	_, errC := os.Stat(p.CertFile)
	_, errK := os.Stat(p.KeyFile)
	switch {
	case errC == nil && errK == nil:
		return true, nil
	case errors.Is(errC, os.ErrNotExist) || errors.Is(errK, os.ErrNotExist):
		return false, nil
	case errC != nil:
		return false, errC
	default:
		return false, errK
	}
}

func load(p Pair) (*x509.Certificate, crypto.Signer, error) {
	certs, err := certutil.CertsFromFile(p.CertFile)
	if err != nil {
		return nil, nil, err
	}
	key, err := keyutil.PrivateKeyFromFile(p.KeyFile)
	if err != nil {
		return nil, nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s: key cannot sign", p.KeyFile)
	}
	return certs[0], signer, nil
}

func ensureCA(p Pair) (*x509.Certificate, crypto.Signer, error) {
	ok, err := exists(p)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		return load(p)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "tessera-ca"}, key)
	if err != nil {
		return nil, nil, err
	}
	if err := write(p, ca, key); err != nil {
		return nil, nil, err
	}
	return ca, key, nil
}

func ensureServing(p Pair, ca *x509.Certificate, caKey crypto.Signer, hosts []string) error {
	ok, err := exists(p)
	if err != nil {
		return err
	}
	if ok {
		cert, _, err := load(p)
		if err == nil && covers(cert, hosts) && cert.CheckSignatureFrom(ca) == nil && time.Now().Before(cert.NotAfter) {
			return nil
		}
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "tessera"},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return sign(p, tmpl, ca, caKey)
}

func covers(cert *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

func ensureClient(p Pair, ca *x509.Certificate, caKey crypto.Signer, user string, groups []string) error {
	ok, err := exists(p)
	if err != nil {
		return err
	}
	if ok {
		cert, _, err := load(p)
		if err == nil && cert.CheckSignatureFrom(ca) == nil && time.Now().Before(cert.NotAfter) &&
			cert.Subject.CommonName == user && slices.Equal(cert.Subject.Organization, groups) {
			return nil
		}
	}
	return sign(p, &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
}

// sign completes tmpl, signs it with the CA and writes it with a new key.
func sign(p Pair, tmpl *x509.Certificate, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(validity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	return write(p, cert, key)
}

func write(p Pair, cert *x509.Certificate, key crypto.Signer) error {
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	if err := keyutil.WriteKey(p.KeyFile, keyPEM); err != nil {
		return err
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return err
	}
	return certutil.WriteCert(p.CertFile, certPEM)
}
