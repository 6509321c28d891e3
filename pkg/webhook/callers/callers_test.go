package callers_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
	"github.com/kruise-ng/kruise/pkg/webhook/callers"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// world is the PKI of one test: the webhook CA with the replicas' serving pair (written where the
// webhook server reads it), the API server's client CA with its client certificate, and a CA
// nobody trusts.
type world struct {
	replicaCA, clientCA, foreignCA *pki.Authority
	certDir, clientCAFile          string
	replica, apiServer, foreign    tls.Certificate
}

func issue(t *testing.T, ca *pki.Authority, r pki.Request) (pki.KeyPair, tls.Certificate) {
	t.Helper()
	r.Validity = time.Hour
	kp, err := ca.Issue(r)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return kp, pair
}

func newAuthority(t *testing.T, name string) *pki.Authority {
	t.Helper()
	ca, err := pki.NewAuthority(name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{replicaCA: newAuthority(t, "kruise-webhook-ca"), clientCA: newAuthority(t, "webhook-client-ca"),
		foreignCA: newAuthority(t, "self-made"), certDir: t.TempDir()}
	serving, pair := issue(t, w.replicaCA, pki.Request{CommonName: "kruise-webhook", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true})
	w.replica = pair
	if _, _, err := serving.WriteFiles(w.certDir, "tls"); err != nil {
		t.Fatal(err)
	}
	_, w.apiServer = issue(t, w.clientCA, pki.Request{CommonName: "kube-apiserver-webhook-client"})
	_, w.foreign = issue(t, w.foreignCA, pki.Request{CommonName: "kube-apiserver-webhook-client"})
	w.clientCAFile = filepath.Join(t.TempDir(), "client-ca.crt")
	if err := os.WriteFile(w.clientCAFile, w.clientCA.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

const convertPath = "/convert"

// serve starts controller-runtime's webhook server behind trust, as the manager does: an
// admission handler at /x/ that says whether it took the call as passed on by a replica, and a
// plain handler at convertPath. It returns host:port.
func serve(t *testing.T, w *world, trust *callers.Trust) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	inner := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: w.certDir, TLSOpts: []func(*tls.Config){trust.ConfigureTLS}})
	srv := &callers.Server{Server: inner, Trust: trust}
	mount.Admission(srv, "/x/", admission.HandlerFunc(func(ctx context.Context, _ admission.Request) admission.Response {
		return admission.Allowed(fmt.Sprintf("forwarded=%v caller=%s", mount.Forwarded(ctx), callers.Of(ctx)))
	}))
	mount.HTTP(srv, convertPath, http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(rw, "converted") }))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := srv.StartedChecker()(nil)
		if err == nil {
			return fmt.Sprintf("127.0.0.1:%d", port)
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhook server not serving after 10s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call posts an AdmissionReview to path at addr, presenting cert (nil: none), marked as passed
// on when forwarded; it returns the HTTP status and the answer's message (or body).
func call(t *testing.T, w *world, addr, path string, cert *tls.Certificate, forwarded bool) (int, string, error) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(w.replicaCA.Cert)
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if cert != nil {
		// Presented whatever CAs the server names (Go's client would otherwise send none it names not).
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
	defer cl.CloseIdleConnections()
	body, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u"}})
	req, err := http.NewRequest(http.MethodPost, "https://"+addr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if forwarded {
		req.Header.Set(mount.ForwardedHeader, "1")
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	review := admissionv1.AdmissionReview{}
	if json.Unmarshal(data, &review) == nil && review.Response != nil && review.Response.Result != nil {
		return resp.StatusCode, review.Response.Result.Message, nil
	}
	return resp.StatusCode, strings.TrimSpace(string(data)), nil
}

// With the API server's client CA configured: a call without a certificate is refused with 403
// (the conversion path excepted), the API server's certificate is served but its forwarded mark
// ignored, a replica's is served as passed on, and a self-made certificate counts as none.
func TestRequiredClientCertificate(t *testing.T) {
	w := newWorld(t)
	trust := &callers.Trust{Replicas: func() []byte { return w.replicaCA.CertPEM }, ClientCAFile: w.clientCAFile, Exempt: []string{convertPath}}
	if err := trust.Check(); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, w, trust)
	refusedBefore := counted(t, "/x/")

	for _, tc := range []struct {
		name      string
		cert      *tls.Certificate
		path      string
		wantCode  int
		wantBody  string
		handshake bool // want the handshake refused
	}{
		{"no certificate", nil, "/x/ns", http.StatusForbidden, "requires a client certificate", false},
		{"no certificate, conversion", nil, convertPath, http.StatusOK, "converted", false},
		{"API server", &w.apiServer, "/x/ns", http.StatusOK, "forwarded=false caller=apiserver", false},
		{"replica", &w.replica, "/x/ns", http.StatusOK, "forwarded=true caller=replica", false},
		{"self-made certificate", &w.foreign, "/x/ns", http.StatusForbidden, "requires a client certificate", false},
	} {
		code, body, err := call(t, w, addr, tc.path, tc.cert, true)
		switch {
		case tc.handshake && err == nil:
			t.Errorf("%s: answered %d %q, want the TLS handshake refused", tc.name, code, body)
		case !tc.handshake && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.handshake && (code != tc.wantCode || !strings.Contains(body, tc.wantBody)):
			t.Errorf("%s: answered %d %q, want %d %q", tc.name, code, body, tc.wantCode, tc.wantBody)
		}
	}
	if n := counted(t, "/x/") - refusedBefore; n != 2 {
		t.Errorf("refusals counted: %v, want 2", n)
	}
}

// With allowed names, a certificate of the API server's CA under another name is refused like no
// certificate at all.
func TestClientNames(t *testing.T) {
	w := newWorld(t)
	trust := &callers.Trust{Replicas: func() []byte { return w.replicaCA.CertPEM }, ClientCAFile: w.clientCAFile,
		ClientNames: []string{"kube-apiserver-webhook-client"}}
	addr := serve(t, w, trust)
	_, user := issue(t, w.clientCA, pki.Request{CommonName: "jane"})
	if code, body, err := call(t, w, addr, "/x/ns", &user, false); err != nil || code != http.StatusForbidden {
		t.Errorf("another name of the client CA: %d %q %v, want 403", code, body, err)
	}
	if code, body, err := call(t, w, addr, "/x/ns", &w.apiServer, false); err != nil || code != http.StatusOK {
		t.Errorf("the allowed name: %d %q %v, want 200", code, body, err)
	}
}

// A replaced client CA file and a renewed webhook CA are trusted without a restart; the CA the
// file no longer holds is not.
func TestTrustFollowsItsFiles(t *testing.T) {
	w := newWorld(t)
	replicaCA := w.replicaCA.CertPEM
	trust := &callers.Trust{Replicas: func() []byte { return replicaCA }, ClientCAFile: w.clientCAFile}
	addr := serve(t, w, trust)
	if _, _, err := call(t, w, addr, "/x/ns", &w.apiServer, false); err != nil {
		t.Fatal(err)
	}
	next := newAuthority(t, "webhook-client-ca-2")
	_, nextCert := issue(t, next, pki.Request{CommonName: "kube-apiserver-webhook-client"})
	if err := os.WriteFile(w.clientCAFile, next.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(w.clientCAFile, later, later); err != nil {
		t.Fatal(err)
	}
	if code, body, err := call(t, w, addr, "/x/ns", &nextCert, false); err != nil || code != http.StatusOK {
		t.Errorf("certificate of the new client CA: %d %q %v", code, body, err)
	}
	if code, body, err := call(t, w, addr, "/x/ns", &w.apiServer, false); err != nil || code != http.StatusForbidden {
		t.Errorf("certificate of the replaced client CA: %d %q %v, want 403", code, body, err)
	}
	// The webhook CA renewed: its bundle holds the new CA and the previous one.
	renewed := newAuthority(t, "kruise-webhook-ca")
	_, peer := issue(t, renewed, pki.Request{CommonName: "kruise-webhook", Server: true})
	replicaCA = append(append([]byte{}, renewed.CertPEM...), w.replicaCA.CertPEM...)
	for name, cert := range map[string]*tls.Certificate{"renewed CA": &peer, "previous CA": &w.replica} {
		if _, body, err := call(t, w, addr, "/x/ns", cert, true); err != nil || !strings.Contains(body, "forwarded=true") {
			t.Errorf("replica certificate of the %s: %q %v", name, body, err)
		}
	}
}

// Without a client CA, a caller without a certificate is served (as OpenKruise serves every
// caller), but its forwarded mark is ignored; a replica's still counts.
func TestOptionalClientCertificate(t *testing.T) {
	w := newWorld(t)
	trust := &callers.Trust{Replicas: func() []byte { return w.replicaCA.CertPEM }}
	addr := serve(t, w, trust)
	if code, body, err := call(t, w, addr, "/x/ns", nil, true); err != nil || code != http.StatusOK || body != "forwarded=false caller=anonymous" {
		t.Errorf("anonymous: %d %q %v", code, body, err)
	}
	if _, body, err := call(t, w, addr, "/x/ns", &w.replica, true); err != nil || body != "forwarded=true caller=replica" {
		t.Errorf("replica: %q %v", body, err)
	}
	// A certificate Kruise does not know (an API server presenting one to every webhook) is served
	// as anonymous, never refused at the handshake, and marks nothing.
	if code, body, err := call(t, w, addr, "/x/ns", &w.foreign, true); err != nil || code != http.StatusOK || body != "forwarded=false caller=anonymous" {
		t.Errorf("a self-made certificate: %d %q %v, want it served as anonymous", code, body, err)
	}
}

// A client CA file that holds no certificate stops the manager at its start.
func TestCheckRefusesABadFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{bad, filepath.Join(t.TempDir(), "missing.crt")} {
		err := (&callers.Trust{ClientCAFile: file}).Check()
		if err == nil || !strings.Contains(err.Error(), "--webhook-client-ca-file") {
			t.Errorf("Check(%s) = %v, want an error naming --webhook-client-ca-file", file, err)
		}
	}
}

// counted is the count of the calls refused at path.
func counted(t *testing.T, path string) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := callers.Refused(path).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
