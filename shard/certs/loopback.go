package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"github.com/google/uuid"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/keyutil"
)

// loopbackValidity is how long the loopback certificate is valid, as
// k8s.io/apiserver's: the process is not expected to run longer.
const loopbackValidity = (3*365 + 1) * 24 * time.Hour

// ApplySecureServingWithLoopback is what k8s.io/apiserver's
// SecureServingOptionsWithLoopback.ApplyTo does, with P-256 keys instead of
// 2048-bit RSA ones: it applies serving to info, then serves a new
// self-signed certificate for the loopback client's server name and points
// loopback at it with a new token. Generating the RSA keys took 50-200 ms
// of every start.
func ApplySecureServingWithLoopback(serving *genericoptions.SecureServingOptions, info **server.SecureServingInfo, loopback **rest.Config) error {
	if err := serving.ApplyTo(info); err != nil {
		return err
	}
	if *info == nil {
		return nil
	}
	certPEM, keyPEM, err := loopbackCertificate(time.Now())
	if err != nil {
		return fmt.Errorf("failed to generate self-signed certificate for loopback connection: %w", err)
	}
	provider, err := dynamiccertificates.NewStaticSNICertKeyContent("self-signed loopback", certPEM, keyPEM, server.LoopbackClientServerNameOverride)
	if err != nil {
		return fmt.Errorf("failed to generate self-signed certificate for loopback connection: %w", err)
	}
	// First, so that it wins over any other certificate for the name.
	(*info).SNICerts = append([]dynamiccertificates.SNICertKeyContentProvider{provider}, (*info).SNICerts...)
	cfg, err := (*info).NewLoopbackClientConfig(uuid.New().String(), certPEM)
	if err != nil {
		(*info).SNICerts = (*info).SNICerts[1:]
		return err
	}
	*loopback = cfg
	return nil
}

// loopbackCertificate returns a serving certificate for the loopback
// client's server name followed by the CA that signed it (PEM), and the
// serving certificate's key.
func loopbackCertificate(now time.Time) (certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial := func() (*big.Int, error) { return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)) }
	caSerial, err := serial()
	if err != nil {
		return nil, nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s-ca@%d", server.LoopbackClientServerNameOverride, now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(loopbackValidity),
		KeyUsage:              x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, caKey.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, nil, err
	}
	leafSerial, err := serial()
	if err != nil {
		return nil, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: leafSerial,
		Subject:      pkix.Name{CommonName: fmt.Sprintf("%s@%d", server.LoopbackClientServerNameOverride, now.Unix())},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(loopbackValidity),
		KeyUsage:     x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{server.LoopbackClientServerNameOverride},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	return certPEM, keyPEM, nil
}
