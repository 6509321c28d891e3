package decider

import (
	"context"
	"encoding/pem"
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

	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// replica is a webhook server serving handle at /x/ over TLS (certificate for example.com).
func replica(t *testing.T, handle admission.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := webhook.NewServer(webhook.Options{})
	registration.Serve(srv, "/x/", handle)
	ts := httptest.NewTLSServer(srv.WebhookMux())
	t.Cleanup(ts.Close)
	return ts
}

func caOf(ts *httptest.Server) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), nil
	}
}

func leaseTo(addr string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kruise-system", Name: LeaseName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(addr)}}
}

func follower(t *testing.T, ca func(context.Context) ([]byte, error), objs ...client.Object) (*Decider, client.Client) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(objs...).Build()
	return &Decider{Client: c, Reader: c, Namespace: "kruise-system", Address: "10.0.0.2:9876", ServerName: "example.com",
		CA: ca, Log: logr.Discard()}, c
}

func request() admission.Request {
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "u1", Operation: admissionv1.Create,
		Namespace: "ns", Object: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"p"}}`)}}}
}

// A follower passes the call to the address in the Lease, marked as forwarded, path and all, and
// returns the decider's answer, patch included.
func TestForwardsToTheDecider(t *testing.T) {
	var path atomic.Value
	leader := replica(t, func(ctx context.Context, req admission.Request) admission.Response {
		path.Store(registration.Suffix(ctx))
		if !registration.Forwarded(ctx) {
			return admission.Denied("not marked as forwarded")
		}
		return admission.PatchResponseFromRaw(req.Object.Raw, []byte(`{"metadata":{"name":"p","labels":{"placed":"yes"}}}`))
	})
	d, _ := follower(t, caOf(leader), leaseTo(leader.Listener.Addr().String()))
	resp, ok := d.Forward(context.Background(), "/x/ns/spread", request())
	if !ok || !resp.Allowed || !strings.Contains(string(resp.Patch), "placed") {
		t.Fatalf("forwarded: ok %v, response %+v", ok, resp.AdmissionResponse)
	}
	if path.Load() != "ns/spread" {
		t.Errorf("decider called at suffix %v", path.Load())
	}
}

// With the decider gone (its address refuses) the follower answers by itself, and keeps doing so
// for a moment without trying again.
func TestAnswersByItselfWithoutDecider(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	var reads atomic.Int32
	d, c := follower(t, func(context.Context) ([]byte, error) { return nil, nil }, leaseTo(dead))
	d.CA = caOf(replica(t, func(context.Context, admission.Request) admission.Response { return admission.Allowed("") }))
	d.Reader = countingReader{Reader: c, n: &reads}
	if _, ok := d.Forward(context.Background(), "/x/ns/spread", request()); ok {
		t.Fatal("forwarded to an address that refuses")
	}
	before := reads.Load()
	if _, ok := d.Forward(context.Background(), "/x/ns/spread", request()); ok || reads.Load() != before {
		t.Errorf("second call: forwarded %v, Lease read %d more times; want neither within %v", ok, reads.Load()-before, unreachableFor)
	}
	// No Lease at all: nobody to forward to.
	d2, _ := follower(t, d.CA)
	if _, ok := d2.Forward(context.Background(), "/x/ns/spread", request()); ok {
		t.Error("forwarded with no Lease")
	}
}

// A replica that no longer decides says so; the follower reads the Lease again and reaches the new
// decider at once.
func TestFollowsTheNewDecider(t *testing.T) {
	var c client.Client
	newLeader := replica(t, func(context.Context, admission.Request) admission.Response { return admission.Allowed("new") })
	old := replica(t, func(ctx context.Context, _ admission.Request) admission.Response {
		// The new leader publishes while the old one is asked.
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-system", Name: LeaseName}, lease); err == nil {
			lease.Spec.HolderIdentity = ptr.To(newLeader.Listener.Addr().String())
			_ = c.Update(ctx, lease)
		}
		return admission.Errored(http.StatusServiceUnavailable, notDeciding{})
	})
	// Both test servers share one certificate.
	d, cl := follower(t, caOf(old), leaseTo(old.Listener.Addr().String()))
	c = cl
	resp, ok := d.Forward(context.Background(), "/x/ns/spread", request())
	if !ok || resp.Result == nil || resp.Result.Message != "new" {
		t.Fatalf("after the decider changed: ok %v, response %+v", ok, resp.AdmissionResponse)
	}
}

// The leader publishes its address, is told to (Leading) at once and decides (Deciding) after the
// settling time; when it stops it stops deciding first and runs OnStop.
func TestLeaderPublishesAndDecides(t *testing.T) {
	d, c := follower(t, nil, leaseTo("10.0.0.9:9876"))
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
