package integration

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
	"github.com/kruise-ng/kruise/pkg/webhook/certs"
	"github.com/kruise-ng/kruise/test/harness"
)

func certClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apiextv1.AddToScheme(scheme)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func certNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "certs-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func parseCert(t *testing.T, p []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(p)
	if b == nil {
		t.Fatal("not PEM")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// verifies reports whether the serving certificate chains to a CA of the bundle for host.
func verifies(t *testing.T, b *certs.Bundle, host string, at time.Time) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.CABundle) {
		t.Fatal("CA bundle holds no certificate")
	}
	_, err := parseCert(t, b.ServingCert).Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: at})
	return err
}

// The manager creates its certificates once, reuses them while valid, renews the serving
// certificate (same CA) ahead of expiry, and on a CA renewal keeps the old CA in the bundle.
func TestWebhookCertificatesAreCreatedReusedAndRenewed(t *testing.T) {
	ctx := context.Background()
	c := certClient(t)
	ns := certNamespace(t, c)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	opts := certs.Options{
		Namespace: ns, SecretName: "kruise-webhook-certs",
		DNSNames: []string{"kruise-webhook-service." + ns + ".svc"}, IPs: []net.IP{net.ParseIP("127.0.0.1")},
		CAValidity: 48 * time.Hour, CertValidity: 12 * time.Hour, RenewBefore: 3 * time.Hour, Clock: clk,
	}
	first, err := certs.Ensure(ctx, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifies(t, first, "kruise-webhook-service."+ns+".svc", clk.Now()); err != nil {
		t.Fatalf("new serving certificate does not verify for the Service name: %v", err)
	}
	if err := verifies(t, first, "127.0.0.1", clk.Now()); err != nil {
		t.Fatalf("new serving certificate does not verify for 127.0.0.1: %v", err)
	}
	again, err := certs.Ensure(ctx, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.ServingCert, first.ServingCert) {
		t.Fatal("valid certificates were replaced")
	}

	clk.SetTime(first.RenewAt.Add(time.Minute)) // inside the serving certificate's renewal window
	renewed, err := certs.Ensure(ctx, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(renewed.ServingCert, first.ServingCert) {
		t.Fatal("serving certificate not renewed inside its renewal window")
	}
	if !bytes.Equal(renewed.CABundle, first.CABundle) {
		t.Fatal("a serving-certificate renewal changed the CA bundle: API servers would distrust the server")
	}

	oldCA := parseCert(t, first.CABundle)
	clk.SetTime(oldCA.NotAfter.Add(-2 * time.Hour)) // inside the CA's renewal window, CA still valid
	rotated, err := certs.Ensure(ctx, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rotated.CABundle, first.CABundle) || bytes.Equal(rotated.CABundle, first.CABundle) {
		t.Fatal("after a CA renewal the bundle must hold the new CA and, until it expires, the old one")
	}
	if err := verifies(t, rotated, "127.0.0.1", clk.Now()); err != nil {
		t.Fatalf("serving certificate after CA renewal does not verify: %v", err)
	}

	opts.DNSNames = append(opts.DNSNames, "kruise-webhook-service."+ns+".svc.cluster.local")
	widened, err := certs.Ensure(ctx, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifies(t, widened, "kruise-webhook-service."+ns+".svc.cluster.local", clk.Now()); err != nil {
		t.Fatalf("a new name was not added to the serving certificate: %v", err)
	}
}

// Replicas starting together agree on one set of certificates.
func TestReplicasConvergeOnOneCertificate(t *testing.T) {
	ctx := context.Background()
	c := certClient(t)
	ns := certNamespace(t, c)
	opts := certs.Options{Namespace: ns, SecretName: "kruise-webhook-certs", IPs: []net.IP{net.ParseIP("127.0.0.1")}}
	bundles := make([]*certs.Bundle, 5)
	var wg sync.WaitGroup
	for i := range bundles {
		wg.Go(func() {
			b, err := certs.Ensure(ctx, c, opts)
			if err != nil {
				t.Error(err)
				return
			}
			bundles[i] = b
		})
	}
	wg.Wait()
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kruise-webhook-certs"}, secret); err != nil {
		t.Fatal(err)
	}
	for i, b := range bundles {
		if b == nil {
			continue
		}
		if !bytes.Equal(b.CABundle, secret.Data[certs.KeyCACert]) {
			t.Errorf("replica %d uses a CA that is not the stored one", i)
		}
	}
}

// The CA bundle lands in every webhook and in the CRD's conversion webhook; in URL mode each
// webhook points at URL+its path. A second patch with the same bundle writes nothing.
func TestCABundleIsPatchedIntoWebhooksAndCRDs(t *testing.T) {
	ctx := context.Background()
	c := certClient(t)
	svc := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "kruise-system", Name: "kruise-webhook-service", Path: ptr.To(path)}}
	}
	none := admissionregistrationv1.SideEffectClassNone
	rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{"certs.example.io"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "test-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "m.certs.example.io", ClientConfig: svc("/mutate-widget"),
			Rules: rules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "test-validating"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "v.certs.example.io", ClientConfig: svc("/validate-widget"),
			Rules: rules, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
	crd := widgetCRD()
	for _, o := range []client.Object{mwc, vwc, crd} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	targets := certs.Targets{MutatingWebhookConfigurations: []string{"test-mutating"},
		ValidatingWebhookConfigurations: []string{"test-validating"}, CRDs: []string{crd.Name}, URL: "https://127.0.0.1:9443"}
	ca, err := pki.NewAuthority("test-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	bundle := ca.CertPEM
	if err := certs.PatchCABundle(ctx, c, targets, bundle); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(mwc), mwc); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(vwc), vwc); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what string
		cc   admissionregistrationv1.WebhookClientConfig
		url  string
	}{
		{"mutating webhook", mwc.Webhooks[0].ClientConfig, "https://127.0.0.1:9443/mutate-widget"},
		{"validating webhook", vwc.Webhooks[0].ClientConfig, "https://127.0.0.1:9443/validate-widget"},
		{"CRD conversion webhook", admissionregistrationv1.WebhookClientConfig{
			URL: crd.Spec.Conversion.Webhook.ClientConfig.URL, CABundle: crd.Spec.Conversion.Webhook.ClientConfig.CABundle}, "https://127.0.0.1:9443/convert"},
	}
	for _, ch := range checks {
		if !bytes.Equal(ch.cc.CABundle, bundle) {
			t.Errorf("%s: caBundle not patched", ch.what)
		}
		if ch.cc.URL == nil || *ch.cc.URL != ch.url || ch.cc.Service != nil {
			t.Errorf("%s: endpoint = url %v service %v; want url %s", ch.what, ch.cc.URL, ch.cc.Service, ch.url)
		}
	}
	rv := mwc.ResourceVersion
	if err := certs.PatchCABundle(ctx, c, targets, bundle); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(mwc), mwc); err != nil {
		t.Fatal(err)
	}
	if mwc.ResourceVersion != rv {
		t.Error("an unchanged CA bundle caused a write")
	}
	if err := certs.PatchCABundle(ctx, c, certs.Targets{MutatingWebhookConfigurations: []string{"absent"}}, bundle); err == nil {
		t.Error("patching a missing webhook configuration succeeded silently")
	}
}

func widgetCRD() *apiextv1.CustomResourceDefinition {
	schema := &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.certs.example.io"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "certs.example.io", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Storage: false, Schema: schema},
			},
			Conversion: &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
				ConversionReviewVersions: []string{"v1"},
				ClientConfig: &apiextv1.WebhookClientConfig{Service: &apiextv1.ServiceReference{
					Namespace: "kruise-system", Name: "kruise-webhook-service", Path: ptr.To("/convert")}},
			}},
		},
	}
}

// A renewed certificate is served without restarting the webhook server.
func TestWebhookServerPicksUpRenewedCertificate(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := certClient(t)
	ns := certNamespace(t, c)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	dir := t.TempDir()
	rot := &certs.Rotator{Client: c, CertDir: dir, Options: certs.Options{Namespace: ns, SecretName: "kruise-webhook-certs",
		IPs: []net.IP{net.ParseIP("127.0.0.1")}, CertValidity: time.Hour, RenewBefore: 10 * time.Minute, Clock: clk}}
	renewAt, err := rot.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port := harness.FreePort(t)
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	go func() { _ = srv.Start(ctx) }()
	serial := func() (string, error) {
		leaf, err := served(port)
		if err != nil {
			return "", err
		}
		return leaf.SerialNumber.String(), nil
	}
	var before string
	harness.Eventually(t, 20*time.Second, "webhook server serving", func() (bool, string) {
		s, err := serial()
		before = s
		return err == nil, fmt.Sprint(err)
	})
	clk.SetTime(renewAt.Add(time.Minute))
	if _, err := rot.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "renewed certificate served", func() (bool, string) {
		s, err := serial()
		return err == nil && s != before, fmt.Sprintf("serial %s (before %s), err %v", s, before, err)
	})
}
