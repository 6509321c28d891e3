package certs

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Rotator keeps the webhook certificates valid while the manager runs: it renews them ahead of
// expiry, rewrites the served files and re-patches the CA bundles. It runs on every replica (files
// are per replica); the Secret's optimistic concurrency makes replicas agree.
type Rotator struct {
	Client  client.Client
	Options Options
	Targets Targets
	// CertDir is the folder the webhook server reads its certificate from.
	CertDir string
	// Resync bounds the wait between checks, so renewals made by another replica are adopted.
	Resync time.Duration
	Log    logr.Logger
}

// Sync makes the certificates, files and CA bundles current once, and returns when to check next.
func (r *Rotator) Sync(ctx context.Context) (time.Time, error) {
	b, err := Ensure(ctx, r.Client, r.Options)
	if err != nil {
		return time.Time{}, err
	}
	changed, err := WriteFiles(r.CertDir, b)
	if err != nil {
		return time.Time{}, err
	}
	if changed {
		r.Log.Info("webhook serving certificate written", "dir", r.CertDir, "renewAt", b.RenewAt)
	}
	if err := PatchCABundle(ctx, r.Client, r.Targets, b.CABundle); err != nil {
		return time.Time{}, err
	}
	return b.RenewAt, nil
}

// Start runs Sync until ctx ends, at the renewal deadline or every Resync, whichever comes first.
// Errors are logged and retried after a short backoff: serving with a certificate that is still
// valid is better than stopping the manager.
func (r *Rotator) Start(ctx context.Context) error {
	resync := r.Resync
	if resync == 0 {
		resync = 5 * time.Minute
	}
	clk := r.Options.withDefaults().Clock
	for {
		next, err := r.Sync(ctx)
		wait := resync
		if err != nil {
			r.Log.Error(err, "webhook certificate sync failed; retrying")
			wait = 10 * time.Second
		} else if d := next.Sub(clk.Now()); d < wait {
			wait = max(d, time.Second)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// NeedLeaderElection is false: every replica serves webhooks and needs its own files.
func (r *Rotator) NeedLeaderElection() bool { return false }
