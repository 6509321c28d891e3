package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// KeyPair is a certificate with its private key, both PEM-encoded.
type KeyPair struct {
	CertPEM []byte
	KeyPEM  []byte
	// Cert is the parsed certificate.
	Cert *x509.Certificate
	key  crypto.Signer
}

// Authority is a certificate authority that signs serving and client certificates.
type Authority struct{ KeyPair }

// Request describes a certificate to issue.
type Request struct {
	// CommonName is the subject CN: the user name of a client certificate.
	CommonName string
	// Groups become the subject O: the groups of a client certificate.
	Groups []string
	// DNSNames and IPs are the subject alternative names of a serving certificate.
	DNSNames []string
	IPs      []net.IP
	// Server makes a serving certificate (server and client auth); otherwise client auth only.
	Server bool
	// Validity is how long the certificate is valid from Start.
	Validity time.Duration
	// Start is when validity begins; zero means now.
	Start time.Time
}

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() (*big.Int, error) { return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120)) }

// backdate tolerates clock skew between the issuer and the verifier.
const backdate = time.Hour

func encode(der []byte, key crypto.Signer) (KeyPair, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return KeyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Cert:    cert,
		key:     key,
	}, nil
}

// NewAuthority creates a self-signed CA valid for validity from now.
func NewAuthority(name string, validity time.Duration) (*Authority, error) {
	return NewAuthorityAt(name, time.Now(), validity)
}

// NewAuthorityAt creates a self-signed CA valid for validity from start.
func NewAuthorityAt(name string, start time.Time, validity time.Duration) (*Authority, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	now := start
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	kp, err := encode(der, key)
	return &Authority{kp}, err
}

// ParseKeyPair decodes a PEM certificate and its PEM (PKCS#8) private key.
func ParseKeyPair(certPEM, keyPEM []byte) (KeyPair, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return KeyPair{}, errors.New("certificate or key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return KeyPair{}, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return KeyPair{}, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return KeyPair{}, errors.New("key cannot sign")
	}
	if pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(signer.Public()) {
		return KeyPair{}, errors.New("key does not match the certificate")
	}
	return KeyPair{CertPEM: certPEM, KeyPEM: keyPEM, Cert: cert, key: signer}, nil
}

// ParseAuthority decodes a CA written by KeyPair.WriteFiles or kept in a Secret.
func ParseAuthority(certPEM, keyPEM []byte) (*Authority, error) {
	kp, err := ParseKeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if !kp.Cert.IsCA {
		return nil, errors.New("certificate is not a CA")
	}
	return &Authority{kp}, nil
}

// LoadAuthority reads a CA from files.
func LoadAuthority(certFile, keyFile string) (*Authority, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	a, err := ParseAuthority(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s, %s: %w", certFile, keyFile, err)
	}
	return a, nil
}

// Issue signs a leaf certificate.
func (a *Authority) Issue(r Request) (KeyPair, error) {
	key, err := newKey()
	if err != nil {
		return KeyPair{}, err
	}
	sn, err := serial()
	if err != nil {
		return KeyPair{}, err
	}
	now := r.Start
	if now.IsZero() {
		now = time.Now()
	}
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if r.Server {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	notAfter := now.Add(r.Validity)
	if notAfter.After(a.Cert.NotAfter) {
		notAfter = a.Cert.NotAfter // a leaf never outlives its CA
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: r.CommonName, Organization: r.Groups},
		NotBefore:    now.Add(-backdate),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usage,
		DNSNames:     r.DNSNames,
		IPAddresses:  r.IPs,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, key.Public(), a.key)
	if err != nil {
		return KeyPair{}, err
	}
	return encode(der, key)
}

// Verify checks that leaf chains to the authority for the given usage and, when host is set,
// covers host (a DNS name or an IP).
func (a *Authority) Verify(leaf *x509.Certificate, usage x509.ExtKeyUsage, host string, at time.Time) error {
	pool := x509.NewCertPool()
	pool.AddCert(a.Cert)
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, KeyUsages: []x509.ExtKeyUsage{usage}, CurrentTime: at})
	return err
}

// WriteFiles stores the pair as base.crt and base.key under dir (mode 0600).
func (kp KeyPair) WriteFiles(dir, base string) (certFile, keyFile string, err error) {
	certFile, keyFile = filepath.Join(dir, base+".crt"), filepath.Join(dir, base+".key")
	if err := os.WriteFile(certFile, kp.CertPEM, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, kp.KeyPEM, 0o600)
}

// WriteSigningKey writes a new ECDSA key pair for signing tokens as dir/name.pub and dir/name.key.
func WriteSigningKey(dir, name string) (pubFile, keyFile string, err error) {
	key, err := newKey()
	if err != nil {
		return "", "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", err
	}
	pubFile, keyFile = filepath.Join(dir, name+".pub"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return "", "", err
	}
	return pubFile, keyFile, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}
