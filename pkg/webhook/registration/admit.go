package registration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AdmitTimeout bounds Admit: less than the 10 s the API server gives the admission calling it.
const AdmitTimeout = 7 * time.Second

// Admission is the admission side of a registration: the admission of an object that gets
// entries adds the entries of the version being stored, before the API server stores it (or
// records that it needs those in place, which its registrar, not knowing it yet, might remove),
// and answers only once the API server calls them, so that no request made after the object's
// create or update returned passes by its entries. The registrar takes the entries over once
// it has seen that version (Pending).
type Admission struct {
	// Client writes the configuration and dry-runs the probe.
	Client client.Client
	// Live reads the configuration from the API server before each write.
	Live client.Reader
	// Namespace is the manager's: the probe's.
	Namespace string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Object is the version of one object an admission registers: its registrar's key and its
// generation as the API server will store it, and where the probe entry calls.
type Object struct {
	Key        string
	Generation int64
	Probe      admissionregistrationv1.WebhookClientConfig
}

// admit records in configuration that o needs the entries of want (named as the registrar names
// them): those it does not hold yet, under any name, are added as pending entries; then it waits,
// within ctx and AdmitTimeout, until the API server calls them (Confirm).
func admit[W any](ctx context.Context, a Admission, k kind[W], configuration string, o Object, want []W) error {
	if len(want) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, AdmitTimeout)
	defer cancel()
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	start := time.Now()
	err := registerAndConfirm(ctx, a, k, configuration, o, want, now)
	result := "confirmed"
	if err != nil {
		result = "refused"
	}
	admitSeconds.WithLabelValues(configuration, result).Observe(time.Since(start).Seconds())
	return err
}

func registerAndConfirm[W any](ctx context.Context, a Admission, k kind[W], configuration string, o Object, want []W, now func() time.Time) error {
	for {
		cfg := k.object()
		if err := a.Live.Get(ctx, client.ObjectKey{Name: configuration}, cfg); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("%s %s is missing (the install creates it)", k.name, configuration)
			}
			return fmt.Errorf("read %s %s: %v", k.name, configuration, err)
		}
		t := read(k, cfg)
		if !t.add(k, o, want, metav1.NewTime(now())) {
			return Confirm(ctx, a.Client, a.Namespace, configuration, t.serial) // a retried admission
		}
		t.write(k, cfg, ProbeEntry{ClientConfig: o.Probe, Namespace: a.Namespace})
		err := a.Client.Update(ctx, cfg)
		if apierrors.IsConflict(err) {
			continue // another admission or the registrar wrote meanwhile
		}
		if err != nil {
			return fmt.Errorf("register the webhooks of %s %s: %v", k.name, configuration, err)
		}
		return Confirm(ctx, a.Client, a.Namespace, configuration, t.serial)
	}
}

// add records in t that o needs each entry of want: an entry t holds already (under any name:
// the registrar may be about to remove it, not knowing o yet), or a pending entry added for it.
// It says whether t changed (and then counts the write in t.serial).
func (t *table[W]) add(k kind[W], o Object, want []W, now metav1.Time) bool {
	changed := false
	for _, w := range want {
		name := t.covering(k, w)
		if name == "" {
			name = pendingName(k, w, o.Generation)
			*k.nameOf(&w) = name
			t.webhooks = append(t.webhooks, w)
		}
		if slices.ContainsFunc(t.pending[name], func(p Pending) bool { return p.Object == o.Key && p.Generation == o.Generation }) {
			continue
		}
		t.pending[name] = append(t.pending[name], Pending{Object: o.Key, Generation: o.Generation, Since: now})
		changed = true
	}
	if changed {
		t.serial++
	}
	return changed
}

// pendingName is PendingName of w's name with a hash of w's content: two admissions of one
// generation with different specs (a create refused after admission, then made again) never
// share an entry.
func pendingName[W any](k kind[W], w W, generation int64) string {
	name := *k.nameOf(&w)
	*k.nameOf(&w) = ""
	raw, _ := json.Marshal(w)
	sum := sha256.Sum256(raw)
	return PendingName(name, generation, hex.EncodeToString(sum[:4]))
}
