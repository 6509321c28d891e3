package decider

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
	"github.com/kruise-ng/kruise/pkg/webhook/callers"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// replicaPKI is a webhook CA and the serving pair it issued (for example.com and 127.0.0.1, with
// client auth), written to dir as the replicas' files are.
type replicaPKI struct {
	ca                *pki.Authority
	certFile, keyFile string
	pair              tls.Certificate
}

func newPKI(t *testing.T) *replicaPKI {
	t.Helper()
	ca, err := pki.NewAuthority("kruise-webhook-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(pki.Request{CommonName: "kruise-webhook", DNSNames: []string{"example.com"},
		IPs: []net.IP{net.ParseIP("127.0.0.1")}, Server: true, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := kp.WriteFiles(t.TempDir(), "tls")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &replicaPKI{ca: ca, certFile: certFile, keyFile: keyFile, pair: pair}
}

// replica is a webhook server serving handle at /x/ over TLS with p's serving pair, trusting
// p's CA for replicas, as the manager serves (callers.Server).
func replica(t *testing.T, p *replicaPKI, handle admission.HandlerFunc) *httptest.Server {
	t.Helper()
	trust := &callers.Trust{Replicas: func() []byte { return p.ca.CertPEM }}
	srv := &callers.Server{Server: webhook.NewServer(webhook.Options{}), Trust: trust}
	mount.Admission(srv, "/x/", handle)
	ts := httptest.NewUnstartedServer(srv.WebhookMux())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{p.pair}}
	trust.ConfigureTLS(ts.TLS)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return ts
}

func (p *replicaPKI) caBundle(context.Context) ([]byte, error) { return p.ca.CertPEM, nil }

func leaseTo(addr string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kruise-system", Name: LeaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(addr)}}
}

// follower is a replica that trusts p's CA and presents p's serving pair as its certificate.
func follower(t *testing.T, p *replicaPKI, objs ...client.Object) (*Decider, client.Client) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).Build()
	return &Decider{Client: c, Reader: c, Namespace: "kruise-system", Address: "10.0.0.2:9876", ServerName: "example.com",
		CA: p.caBundle, ClientCertificate: callers.FileCertificate(p.certFile, p.keyFile), Log: logr.Discard()}, c
}

func request() admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "u1", Operation: admissionv1.Create,
		Namespace: "ns", Object: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"p"}}`)}}}
}

// A follower passes the call to the address in the Lease, marked as forwarded, path and all, and
// returns the decider's answer, patch included.
func TestForwardsToTheDecider(t *testing.T) {
	p := newPKI(t)
	var path atomic.Value
	leader := replica(t, p, func(ctx context.Context, req admission.Request) admission.Response {
		path.Store(mount.Suffix(ctx))
		if !mount.Forwarded(ctx) {
			return admission.Denied("not marked as forwarded")
		}
		return admission.PatchResponseFromRaw(req.Object.Raw, []byte(`{"metadata":{"name":"p","labels":{"placed":"yes"}}}`))
	})
	d, _ := follower(t, p, leaseTo(leader.Listener.Addr().String()))
	resp, ok := d.Forward(context.Background(), "/x/ns/spread", request())
	if !ok || !resp.Allowed || !strings.Contains(string(resp.Patch), "placed") {
		t.Fatalf("forwarded: ok %v, response %+v", ok, resp.AdmissionResponse)
	}
	if path.Load() != "ns/spread" {
		t.Errorf("decider called at suffix %v", path.Load())
	}
}

// The forwarded mark counts only from a caller with a replica's certificate: without one the call
// is answered as any caller's, and so is a call with a certificate of another CA.
func TestForwardedMarkNeedsAReplicaCertificate(t *testing.T) {
	p := newPKI(t)
	var marked atomic.Int32
	leader := replica(t, p, func(ctx context.Context, _ admission.Request) admission.Response {
		if mount.Forwarded(ctx) {
			marked.Add(1)
		}
		return admission.Allowed("")
	})
	d, _ := follower(t, p, leaseTo(leader.Listener.Addr().String()))
	d.ClientCertificate = nil
	if _, ok := d.Forward(context.Background(), "/x/ns/spread", request()); !ok || marked.Load() != 0 {
		t.Errorf("without a certificate: answered %v, taken as forwarded %d times", ok, marked.Load())
	}
	other := newPKI(t) // a certificate the decider's CA did not issue
	d2, _ := follower(t, p, leaseTo(leader.Listener.Addr().String()))
	d2.ClientCertificate = callers.FileCertificate(other.certFile, other.keyFile)
	if _, ok := d2.Forward(context.Background(), "/x/ns/spread", request()); !ok || marked.Load() != 0 {
		t.Errorf("with a foreign certificate: answered %v, taken as forwarded %d times", ok, marked.Load())
	}
}

// With the decider gone (its address refuses) the follower answers by itself, and keeps doing so
// for a moment without trying again.
func TestAnswersByItselfWithoutDecider(t *testing.T) {
	p := newPKI(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	var reads atomic.Int32
	d, c := follower(t, p, leaseTo(dead))
	d.Reader = countingReader{Reader: c, n: &reads}
	if _, ok := d.Forward(context.Background(), "/x/ns/spread", request()); ok {
		t.Fatal("forwarded to an address that refuses")
	}
	before := reads.Load()
	if _, ok := d.Forward(context.Background(), "/x/ns/spread", request()); ok || reads.Load() != before {
		t.Errorf("second call: forwarded %v, Lease read %d more times; want neither within %v", ok, reads.Load()-before, unreachableFor)
	}
	// No Lease at all: nobody to forward to.
	d2, _ := follower(t, p)
	if _, ok := d2.Forward(context.Background(), "/x/ns/spread", request()); ok {
		t.Error("forwarded with no Lease")
	}
}

// A replica that no longer decides says so; the follower reads the Lease again and reaches the new
// decider at once.
func TestFollowsTheNewDecider(t *testing.T) {
	p := newPKI(t)
	var c client.Client
	newLeader := replica(t, p, func(context.Context, admission.Request) admission.Response { return admission.Allowed("new") })
	old := replica(t, p, func(ctx context.Context, _ admission.Request) admission.Response {
		// The new leader publishes while the old one is asked.
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-system", Name: LeaseName}, lease); err == nil {
			lease.Spec.HolderIdentity = ptr.To(newLeader.Listener.Addr().String())
			_ = c.Update(ctx, lease)
		}
		return admission.Errored(http.StatusServiceUnavailable, notDeciding{})
	})
	// Both test servers share one certificate.
	d, cl := follower(t, p, leaseTo(old.Listener.Addr().String()))
	c = cl
	resp, ok := d.Forward(context.Background(), "/x/ns/spread", request())
	if !ok || resp.Result == nil || resp.Result.Message != "new" {
		t.Fatalf("after the decider changed: ok %v, response %+v", ok, resp.AdmissionResponse)
	}
}

// The leader publishes its address, is told to (Leading) at once and decides (Deciding) after the
// settling time; when it stops it stops deciding first and runs OnStop.
func TestLeaderPublishesAndDecides(t *testing.T) {
	d, c := follower(t, newPKI(t), leaseTo("10.0.0.9:9876"))
	d.Settle = 50 * time.Millisecond
	stopped := make(chan bool, 1)
	d.OnStop = []func(context.Context){func(context.Context) { stopped <- d.Deciding() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Start(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for !d.Deciding() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !d.Deciding() || !d.Leading() || gauge(t) != 1 {
		t.Fatalf("deciding %v, leading %v, gauge %v", d.Deciding(), d.Leading(), gauge(t))
	}
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-system", Name: LeaseName}, lease); err != nil || *lease.Spec.HolderIdentity != d.Address {
		t.Errorf("Lease %+v (%v), want holder %s", lease.Spec, err, d.Address)
	}
	// Its own address in the Lease is never forwarded to.
	if addr := d.lookup(ctx, true); addr != "" {
		t.Errorf("lookup on the leader = %q", addr)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if stillDeciding := <-stopped; stillDeciding || d.Leading() || gauge(t) != 0 {
		t.Errorf("OnStop ran while deciding %v; leading after stop %v", stillDeciding, d.Leading())
	}
}

type notDeciding struct{}

func (notDeciding) Error() string { return NotDeciding }

type countingReader struct {
	client.Reader
	n *atomic.Int32
}

func (r countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.n.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// gauge is the value of the deciding gauge.
func gauge(t *testing.T) float64 {
	t.Helper()
	m := &dto.Metric{}
	if err := decidingGauge.Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}
