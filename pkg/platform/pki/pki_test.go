package pki

import (
	"crypto/x509"
	"net"
	"path/filepath"
	"testing"
	"time"
)

func TestIssuedCertificatesChainToTheCA(t *testing.T) {
	ca, err := NewAuthority("test-ca", 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile, err := ca.WriteFiles(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadAuthority(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	client, err := loaded.Issue(Request{CommonName: "system:kube-scheduler", Groups: []string{"g1"}, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue(Request{CommonName: "kube-apiserver", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := ca.Verify(client.Cert, x509.ExtKeyUsageClientAuth, "", now); err != nil {
		t.Errorf("client certificate does not verify: %v", err)
	}
	if client.Cert.Subject.CommonName != "system:kube-scheduler" || client.Cert.Subject.Organization[0] != "g1" {
		t.Errorf("client identity = %v; want CN=user, O=groups", client.Cert.Subject)
	}
	if err := ca.Verify(server.Cert, x509.ExtKeyUsageServerAuth, "127.0.0.1", now); err != nil {
		t.Errorf("serving certificate does not verify for 127.0.0.1: %v", err)
	}
	if err := ca.Verify(server.Cert, x509.ExtKeyUsageServerAuth, "other.example", now); err == nil {
		t.Error("serving certificate verified for a name it does not carry")
	}
	if err := ca.Verify(server.Cert, x509.ExtKeyUsageServerAuth, "localhost", now.Add(2*time.Hour)); err == nil {
		t.Error("an expired certificate verified")
	}
	other, _ := NewAuthority("other-ca", time.Hour)
	if err := other.Verify(server.Cert, x509.ExtKeyUsageServerAuth, "localhost", now); err == nil {
		t.Error("a certificate verified against a CA that did not sign it")
	}
}

func TestLeafNeverOutlivesItsCA(t *testing.T) {
	ca, err := NewAuthority("short-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(Request{CommonName: "x", Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Cert.NotAfter.After(ca.Cert.NotAfter) {
		t.Fatalf("leaf expires %v after its CA (%v)", leaf.Cert.NotAfter, ca.Cert.NotAfter)
	}
}

func TestParseRejectsWhatIsNotACA(t *testing.T) {
	dir := t.TempDir()
	pub, key, err := WriteSigningKey(dir, "sa")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAuthority(pub, key); err == nil {
		t.Error("a public key loaded as a CA certificate")
	}
	ca, _ := NewAuthority("ca", time.Hour)
	leaf, _ := ca.Issue(Request{CommonName: "leaf", Validity: time.Hour})
	if _, err := ParseAuthority(leaf.CertPEM, leaf.KeyPEM); err == nil {
		t.Error("a leaf certificate was accepted as a CA")
	}
	if _, err := LoadAuthority(filepath.Join(dir, "missing.crt"), key); err == nil {
		t.Error("a missing file loaded")
	}
}

// A key that is not the certificate's, or a CA whose key is another CA's, is refused.
func TestParseRefusesAKeyOfAnotherCertificate(t *testing.T) {
	a, err := NewAuthority("a", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewAuthority("b", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseAuthority(a.CertPEM, b.KeyPEM); err == nil {
		t.Error("CA a with b's key accepted")
	}
	leaf, err := a.Issue(Request{CommonName: "x", Server: true, DNSNames: []string{"x"}, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseKeyPair(leaf.CertPEM, a.KeyPEM); err == nil {
		t.Error("leaf with its CA's key accepted")
	}
	if _, err := ParseKeyPair(leaf.CertPEM, leaf.KeyPEM); err != nil {
		t.Errorf("leaf with its own key: %v", err)
	}
}
