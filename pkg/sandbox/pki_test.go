package sandbox

import (
	"crypto/x509"
	"net"
	"path/filepath"
	"testing"
)

func TestIssuedCertificatesChainToTheCA(t *testing.T) {
	ca, err := newAuthority("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, err := ca.write(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := loadAuthority(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	client, err := loaded.issue("system:kube-scheduler", []string{"g1"}, nil, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.issue("kube-apiserver", nil, []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, true)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	if _, err := client.cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate does not verify: %v", err)
	}
	if client.cert.Subject.CommonName != "system:kube-scheduler" || client.cert.Subject.Organization[0] != "g1" {
		t.Errorf("client identity = %v; want CN=user, O=groups", client.cert.Subject)
	}
	if _, err := server.cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("serving certificate does not verify for 127.0.0.1: %v", err)
	}
	if _, _, err := writeServiceAccountKeys(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := loadAuthority(filepath.Join(dir, "sa.pub"), filepath.Join(dir, "sa.key")); err == nil {
		t.Error("a public key loaded as a CA certificate")
	}
}
