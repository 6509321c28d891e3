package decider

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// LeaseName is the Lease whose holderIdentity is the deciding replica's webhook address.
const LeaseName = "kruise-manager-decider"

// lookupTTL is how long a follower trusts the address it read; a failed call forgets it sooner.
const lookupTTL = 5 * time.Second

// unreachableFor is how long a follower answers by itself after the decider did not answer.
const unreachableFor = time.Second

// forwardTimeout bounds one forwarded call; the API server's webhook timeout is longer.
const forwardTimeout = 5 * time.Second

// settle is how long a new decider answers the slow way after publishing its address, so that
// the replicas answering by themselves since its predecessor stopped (unreachableFor) have
// finished their decisions when it starts deciding from memory.
const settle = unreachableFor + 2*time.Second

// NotDeciding is the message of the answer of a replica that was passed a call but does not
// decide (any more): the caller reads the Lease again.
const NotDeciding = "this kruise-manager replica does not decide admissions"

// flushTimeout bounds the writes a stopping decider finishes before another replica decides.
const flushTimeout = 5 * time.Second

// decidingGauge is 1 while this replica decides admissions from memory.
var decidingGauge = prometheus.NewGauge(prometheus.GaugeOpts{Name: "kruise_webhook_deciding",
	Help: "1 while this kruise-manager replica decides the admissions that need one decider (WorkloadSpread placements) from memory, else 0."})

func init() { metrics.Registry.MustRegister(decidingGauge) }

// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kruise-system,resources=leases,resourceNames=kruise-manager-decider,verbs=get;update

// Decider is one replica's part: a runnable that, on the leader, publishes Address and decides
// until the replica stops; and on every replica the forwarding of calls to the decider.
type Decider struct {
	// Client writes the Lease; Reader reads it from the API server (not a cache).
	Client client.Client
	Reader client.Reader
	// Namespace holds the Lease.
	Namespace string
	// Address is host:port this replica's webhook server is reached at by the other replicas;
	// empty when unknown, and then this replica never decides and nobody forwards to it.
	Address string
	// ServerName is a name of the webhook serving certificate, checked on the decider's answer.
	ServerName string
	// CA returns the CA bundle the webhook serving certificate is signed by.
	CA func(ctx context.Context) ([]byte, error)
	// ClientCertificate is the certificate this replica presents to the decider
	// (callers.FileCertificate of its serving pair); nil presents none, and the decider then
	// answers the call as any caller's, not as one passed on.
	ClientCertificate func(*tls.CertificateRequestInfo) (*tls.Certificate, error)
	Log               logr.Logger
	// OnStop runs when the decider stops deciding, before the replica gives up its leadership:
	// the writes still behind are finished there.
	OnStop []func(ctx context.Context)
	// Settle overrides settle (tests).
	Settle time.Duration

	leading, deciding atomic.Bool

	mu          sync.Mutex
	leader      string    // the address last read from the Lease
	readAt      time.Time // when it was read
	quietUntil  time.Time // no forwarding until then: the decider did not answer
	transport   *http.Transport
	transportCA []byte
}

// NeedLeaderElection makes the decider start on the leader only.
func (d *Decider) NeedLeaderElection() bool { return true }

// Start publishes the address and decides until ctx ends; then it stops deciding and runs OnStop.
func (d *Decider) Start(ctx context.Context) error {
	if d.Address == "" {
		d.Log.Info("no webhook address to publish: admissions are answered with their status written first")
		<-ctx.Done()
		return nil
	}
	for {
		err := d.publish(ctx)
		if err == nil {
			break
		}
		d.Log.Error(err, "publish the deciding replica's address; retrying")
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	d.leading.Store(true)
	wait := settle
	if d.Settle > 0 {
		wait = d.Settle
	}
	select {
	case <-ctx.Done():
	case <-time.After(wait):
		d.deciding.Store(true)
		decidingGauge.Set(1)
		d.Log.Info("deciding admissions from memory", "address", d.Address)
		<-ctx.Done()
	}
	d.deciding.Store(false)
	decidingGauge.Set(0)
	d.leading.Store(false)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	for _, f := range d.OnStop {
		f(stopCtx)
	}
	return nil
}

// Deciding reports whether this replica decides from memory now.
func (d *Decider) Deciding() bool { return d.deciding.Load() }

// Leading reports whether the other replicas are told to pass their calls to this one (it
// decides, or is about to).
func (d *Decider) Leading() bool { return d.leading.Load() }

// publish writes Address into the Lease.
func (d *Decider) publish(ctx context.Context) error {
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{}
	err := d.Reader.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: LeaseName}, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: d.Namespace, Name: LeaseName},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(d.Address), AcquireTime: &now, RenewTime: &now}}
		return d.Client.Create(ctx, lease)
	}
	if err != nil {
		return err
	}
	lease.Spec.HolderIdentity, lease.Spec.AcquireTime, lease.Spec.RenewTime = ptr.To(d.Address), &now, &now
	return d.Client.Update(ctx, lease)
}

// Forward sends req to path on the deciding replica and returns its answer; false when this
// replica should answer by itself: no other replica decides, or the decider did not answer.
// A decider that does not answer, or answers that it no longer decides, has the Lease read again
// and the call sent to the address found there if it is another one.
func (d *Decider) Forward(ctx context.Context, path string, req admission.Request) (admission.Response, bool) {
	tried := ""
	for fresh := false; ; fresh = true {
		addr := d.lookup(ctx, fresh)
		if addr == "" || addr == tried {
			break
		}
		resp, err := d.call(ctx, addr, path, req)
		if err == nil && !(resp.Result != nil && resp.Result.Message == NotDeciding) {
			return resp, true
		}
		if err == nil {
			err = errors.New(NotDeciding)
		}
		d.Log.V(1).Info("the deciding replica did not answer", "address", addr, "error", err.Error())
		tried = addr
	}
	d.mu.Lock()
	d.leader, d.quietUntil = "", time.Now().Add(unreachableFor)
	d.mu.Unlock()
	return admission.Response{}, false
}

// lookup is the deciding replica's address, "" when there is none to forward to; fresh reads the
// Lease even when the address read last is recent.
func (d *Decider) lookup(ctx context.Context, fresh bool) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if now.Before(d.quietUntil) {
		return ""
	}
	if fresh || d.leader == "" || now.Sub(d.readAt) > lookupTTL {
		lease := &coordinationv1.Lease{}
		if err := d.Reader.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: LeaseName}, lease); err != nil {
			d.leader, d.quietUntil = "", now.Add(unreachableFor)
			return ""
		}
		d.leader, d.readAt = ptr.Deref(lease.Spec.HolderIdentity, ""), now
	}
	if d.leader == d.Address {
		return "" // this replica's own, from before it restarted
	}
	return d.leader
}

// call posts req to https://addr/path as the API server would and decodes the answer.
func (d *Decider) call(ctx context.Context, addr, path string, req admission.Request) (admission.Response, error) {
	tr, err := d.transportFor(ctx)
	if err != nil {
		return admission.Response{}, err
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Request:  &req.AdmissionRequest})
	if err != nil {
		return admission.Response{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return admission.Response{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set(mount.ForwardedHeader, "1")
	hresp, err := (&http.Client{Transport: tr}).Do(hreq)
	if err != nil {
		return admission.Response{}, err
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK {
		return admission.Response{}, fmt.Errorf("HTTP %d", hresp.StatusCode)
	}
	review := admissionv1.AdmissionReview{}
	if err := json.NewDecoder(hresp.Body).Decode(&review); err != nil {
		return admission.Response{}, err
	}
	if review.Response == nil {
		return admission.Response{}, errors.New("no response in the AdmissionReview")
	}
	return admission.Response{AdmissionResponse: *review.Response}, nil
}

// transportFor is the HTTPS transport that trusts the current CA bundle and presents
// ClientCertificate (kept alive across calls).
func (d *Decider) transportFor(ctx context.Context) (*http.Transport, error) {
	ca, err := d.CA(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.transport != nil && bytes.Equal(ca, d.transportCA) {
		return d.transport, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("no certificate in the webhooks' CA bundle")
	}
	if d.transport != nil {
		d.transport.CloseIdleConnections()
	}
	d.transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: d.ServerName, MinVersion: tls.VersionTLS12,
		GetClientCertificate: d.ClientCertificate},
		MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute, ForceAttemptHTTP2: true}
	d.transportCA = ca
	return d.transport, nil
}
