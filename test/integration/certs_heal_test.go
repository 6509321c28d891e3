package integration

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/platform/pki"
	"github.com/kruise-ng/kruise/pkg/webhook/certs"
	"github.com/kruise-ng/kruise/test/harness"
)

// healDeadline is how soon the webhooks must answer with a trusted certificate after damage.
const healDeadline = 15 * time.Second

// Two manager replicas behind one URL heal their webhook Secret: a serving key that does not match
// its certificate, a CA key that does not match the CA, an expired pair and a deleted Secret are
// each replaced within 15 s, the API server's admission calls succeed again, and at no sample does
// a replica serve a certificate the registered CA bundle does not trust (a replaced CA stays in the
// bundle until both replicas serve the new pair, then leaves it).
func TestWebhookCertificatesHealWithTwoReplicas(t *testing.T) {
	ctx := context.Background()
	admin := harness.KruiseClient(t, cfg)
	installKruise(t, admin)
	key := client.ObjectKey{Namespace: "kruise-system", Name: "kruise-webhook-certs"}
	if err := admin.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err) // a clean start: no report of replicas of earlier tests
	}
	replicas := []manager.Options{managerOptions(t, "heal-0"), managerOptions(t, "heal-1")}
	front, err := sandbox.StartFront(ctx, "127.0.0.1:0", fmt.Sprintf("127.0.0.1:%d", replicas[0].WebhookPort),
		fmt.Sprintf("127.0.0.1:%d", replicas[1].WebhookPort))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Close() })
	for _, mo := range replicas {
		mo.WebhookURLPort = front.Port()
		startManager(t, mo)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "heal-"}}
	if err := admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	w := &certWatcher{t: t, c: admin, ports: []int{replicas[0].WebhookPort, replicas[1].WebhookPort}}
	stop := w.sample()
	defer stop()

	secret := func() *corev1.Secret {
		s := &corev1.Secret{}
		if err := admin.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	damage := func(edit func(data map[string][]byte)) {
		t.Helper()
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s := secret()
			edit(s.Data)
			return admin.Update(ctx, s)
		}); err != nil {
			t.Fatal(err)
		}
	}
	otherCA, err := pki.NewAuthority("not-kruise", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	expiredCA, err := pki.NewAuthorityAt("kruise-webhook-ca", time.Now().Add(-48*time.Hour), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	expiredLeaf, err := expiredCA.Issue(pki.Request{CommonName: "kruise-webhook", DNSNames: []string{"localhost"}, Server: true,
		Start: time.Now().Add(-48 * time.Hour), Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	w.healed(ns.Name, "start", nil)
	for _, tc := range []struct {
		name    string
		harm    func()
		newCA   bool // the CA must be replaced (and the old one leave the bundle once both replicas serve the new one)
		changed func(before, after *corev1.Secret) bool
	}{
		{name: "serving key of another certificate", harm: func() {
			damage(func(d map[string][]byte) { d[certs.KeyServingKey] = otherCA.KeyPEM })
		}},
		{name: "CA key of another CA", newCA: true, harm: func() {
			damage(func(d map[string][]byte) { d[certs.KeyCAKey] = otherCA.KeyPEM })
		}},
		{name: "expired pair", newCA: true, harm: func() {
			damage(func(d map[string][]byte) {
				d[certs.KeyCACert], d[certs.KeyCAKey] = expiredCA.CertPEM, expiredCA.KeyPEM
				d[certs.KeyServingCert], d[certs.KeyServingKey] = expiredLeaf.CertPEM, expiredLeaf.KeyPEM
			})
		}},
		{name: "deleted secret", newCA: true, harm: func() {
			if err := admin.Delete(ctx, secret()); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := secret()
			start := time.Now()
			tc.harm()
			w.t = t
			w.healed(ns.Name, tc.name, before)
			after := secret()
			if tc.newCA == bytes.Equal(before.Data[certs.KeyCACert], after.Data[certs.KeyCACert]) {
				t.Errorf("CA replaced: %v, want %v", !tc.newCA, tc.newCA)
			}
			if tc.newCA {
				harness.Eventually(t, healDeadline-time.Since(start), "the replaced CA out of the bundle once both replicas serve the new one", func() (bool, string) {
					n := len(w.bundle())
					return n == 1, fmt.Sprintf("%d CA(s) in the bundle", n)
				})
			}
			t.Logf("healed in %s", time.Since(start).Round(100*time.Millisecond))
		})
	}
	stop()
	t.Logf("%d samples of the served certificates", w.samples.Load())
	if w.samples.Load() == 0 {
		t.Error("no served certificate was sampled: the check proved nothing")
	}
	if n := w.failures.Load(); n != 0 {
		t.Errorf("%d of %d samples found a replica serving a certificate the registered bundle does not trust: %s", n, w.samples.Load(), w.firstFailure())
	}
}

// certWatcher checks the replicas' served certificates against the CA bundle the API server has.
type certWatcher struct {
	t                 *testing.T
	c                 client.Client
	ports             []int
	samples, failures atomic.Int64
	mu                sync.Mutex
	first             string
}

// bundle is the CA bundle registered for the mutating webhooks.
func (w *certWatcher) bundle() []*x509.Certificate {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := w.c.Get(context.Background(), client.ObjectKey{Name: manager.MutatingWebhookConfiguration}, cfg); err != nil || len(cfg.Webhooks) == 0 {
		return nil
	}
	var out []*x509.Certificate
	for rest := cfg.Webhooks[0].ClientConfig.CABundle; len(rest) > 0; {
		var c []byte
		c, rest = nextPEM(rest)
		if c == nil {
			break
		}
		if cert, err := x509.ParseCertificate(c); err == nil {
			out = append(out, cert)
		}
	}
	return out
}

// served is the leaf certificate the replica on port serves.
func served(port int) (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&netDialer, "tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the chain is checked by trusted
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// trusted reports whether leaf chains to a CA of bundle for 127.0.0.1.
func trusted(leaf *x509.Certificate, bundle []*x509.Certificate) error {
	pool := x509.NewCertPool()
	for _, c := range bundle {
		pool.AddCert(c)
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1"})
	return err
}

// sample checks every replica every 50 ms until stopped; a served certificate trusted by neither
// the bundle read before nor the one read after the handshake is a failure.
func (w *certWatcher) sample() (stop func()) {
	return harness.Every(50*time.Millisecond, func() {
		for _, port := range w.ports {
			before := w.bundle()
			leaf, err := served(port)
			if err != nil {
				continue // restarting its server: the API server's call goes to the other replica
			}
			w.samples.Add(1)
			if trusted(leaf, before) == nil {
				continue
			}
			if err := trusted(leaf, w.bundle()); err != nil {
				w.failures.Add(1)
				w.mu.Lock()
				if w.first == "" {
					w.first = fmt.Sprintf("port %d serves serial %s: %v", port, leaf.SerialNumber, err)
				}
				w.mu.Unlock()
			}
		}
	})
}

func (w *certWatcher) firstFailure() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}

// healed waits until both replicas serve the Secret's current, trusted pair (a new one when before
// is given) and the API server's admission call through them succeeds.
func (w *certWatcher) healed(ns, what string, before *corev1.Secret) {
	t := w.t
	t.Helper()
	harness.Eventually(t, healDeadline, what+": both replicas serve a trusted certificate from a healthy secret", func() (bool, string) {
		s := &corev1.Secret{}
		if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "kruise-system", Name: "kruise-webhook-certs"}, s); err != nil {
			return false, err.Error()
		}
		if before != nil && bytes.Equal(s.Data[certs.KeyServingCert], before.Data[certs.KeyServingCert]) {
			return false, "serving certificate not replaced yet"
		}
		current, err := pki.ParseKeyPair(s.Data[certs.KeyServingCert], s.Data[certs.KeyServingKey])
		if err != nil {
			return false, "secret not healed: " + err.Error()
		}
		bundle := w.bundle()
		for _, port := range w.ports {
			leaf, err := served(port)
			if err != nil {
				return false, err.Error()
			}
			if !leaf.Equal(current.Cert) {
				return false, fmt.Sprintf("port %d serves serial %s, the secret holds %s", port, leaf.SerialNumber, current.Cert.SerialNumber)
			}
			if err := trusted(leaf, bundle); err != nil {
				return false, fmt.Sprintf("port %d: %v", port, err)
			}
		}
		cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{GenerateName: "heal-", Namespace: ns},
			Spec: appsv1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}}}
		for range 2 { // the front alternates: both replicas answer
			if err := w.c.Create(context.Background(), cs.DeepCopy(), client.DryRunAll); err != nil {
				return false, "admission through the API server: " + err.Error()
			}
		}
		return true, ""
	})
}

var netDialer = net.Dialer{Timeout: time.Second}

// nextPEM returns the DER of the first PEM block of data and the rest.
func nextPEM(data []byte) ([]byte, []byte) {
	b, rest := pem.Decode(data)
	if b == nil {
		return nil, nil
	}
	return b.Bytes, rest
}
