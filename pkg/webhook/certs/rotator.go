package certs

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Rotator keeps the webhook certificates valid while the manager runs: it renews them ahead of
// expiry, heals a Secret that was deleted or damaged (a key that does not match its certificate, a
// CA key that does not match the CA, an expired pair), rewrites the served files and re-patches the
// CA bundles. It runs on every replica (files are per replica); the Secret's optimistic concurrency
// makes replicas agree, and each replica reports the CA it serves (ServedByAnnotation) so a replaced
// CA stays trusted until no replica serves it.
type Rotator struct {
	Client client.Client
	// Watch, when set, watches the Secret so a change is acted on at once rather than at the next
	// Resync.
	Watch   client.WithWatch
	Options Options
	Targets Targets
	// CertDir is the folder the webhook server reads its certificate from.
	CertDir string
	// Replica names this replica in ServedByAnnotation (its pod name); empty: nothing is reported
	// and a previous CA stays in the bundle until it expires.
	Replica string
	// Resync bounds the wait between checks, so renewals made by another replica are adopted even
	// without the watch.
	Resync time.Duration
	Log    logr.Logger

	mu       sync.Mutex
	servedCA []byte // the CA of the pair in CertDir
	bundle   atomic.Pointer[[]byte]
}

// CABundle is the CA bundle of the last Sync (PEM: the current CA and, during a switch, the
// previous one); nil before the first. It does not wait for a Sync under way.
func (r *Rotator) CABundle() []byte {
	if b := r.bundle.Load(); b != nil {
		return *b
	}
	return nil
}

// Sync makes the certificates, CA bundles and files current once, and returns when to check next.
// The CA bundles are patched before the files are written, so the API server trusts a new CA
// before this replica serves a certificate it signed.
func (r *Rotator) Sync(ctx context.Context) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, err := EnsureServing(ctx, r.Client, r.Options, r.servedCA)
	if err != nil {
		return time.Time{}, err
	}
	if err := PatchCABundle(ctx, r.Client, r.Targets, b.CABundle); err != nil {
		return time.Time{}, err
	}
	changed, err := WriteFiles(r.CertDir, b)
	if err != nil {
		return time.Time{}, err
	}
	r.servedCA = b.CACert
	r.bundle.Store(&b.CABundle)
	reportExpiry(b)
	if changed {
		r.Log.Info("webhook serving certificate written", "dir", r.CertDir, "renewAt", b.RenewAt)
	}
	if r.Replica != "" {
		if err := Report(ctx, r.Client, r.Options, r.Replica, b.CACert); err != nil {
			return time.Time{}, err
		}
	}
	return b.RenewAt, nil
}

// Start runs Sync until ctx ends: when the Secret changes, at the renewal deadline, or every
// Resync, whichever comes first. Errors are logged and retried after a short backoff: serving with
// a certificate that is still valid is better than stopping the manager.
func (r *Rotator) Start(ctx context.Context) error {
	resync := r.Resync
	if resync == 0 {
		resync = 5 * time.Minute
	}
	changed := make(chan struct{}, 1)
	if r.Watch != nil {
		go r.watch(ctx, changed)
	}
	clk := r.Options.withDefaults().Clock
	for {
		next, err := r.Sync(ctx)
		wait := resync
		if err != nil {
			r.Log.Error(err, "webhook certificate sync failed; retrying")
			wait = 2 * time.Second
		} else if d := next.Sub(clk.Now()); d < wait {
			wait = max(d, time.Second)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// watch signals changed on every event of the Secret (created, updated, deleted), reopening the
// watch when the API server ends it.
func (r *Rotator) watch(ctx context.Context, changed chan<- struct{}) {
	signal := func() {
		select {
		case changed <- struct{}{}:
		default: // a sync is already due
		}
	}
	for ctx.Err() == nil {
		w, err := r.Watch.Watch(ctx, &corev1.SecretList{}, client.InNamespace(r.Options.Namespace),
			client.MatchingFields{"metadata.name": r.Options.SecretName})
		if err != nil {
			r.Log.Error(err, "watch the webhook certificate secret; polling until it can be watched")
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
			continue
		}
		signal() // whatever happened while the watch was down
		for range w.ResultChan() {
			signal()
		}
		w.Stop()
	}
}

// NeedLeaderElection is false: every replica serves webhooks and needs its own files.
func (r *Rotator) NeedLeaderElection() bool { return false }
