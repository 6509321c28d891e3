package registration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AdmitTimeout bounds Admit: less than the 10 s the API server gives the admission calling it.
const AdmitTimeout = 7 * time.Second

// Admission is the admission side of a registration: the admission of an object that gets
// entries adds the entries of the version being stored, before the API server stores it, and
// answers only once the API server calls them, so that no request made after the object's
// create or update returned passes by its entries. The registrar takes the entries over once
// it has seen that version (Pending).
type Admission struct {
	// Client writes the configuration and dry-runs the probe.
	Client client.Client
	// Cache reads the configuration cheaply (an object whose entries are registered already);
	// Live reads it from the API server before a write.
	Cache, Live client.Reader
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

// admit adds the entries of want (named as the registrar names them) that configuration does not
// hold yet as pending entries of o, then waits, within ctx and AdmitTimeout, until the API server
// calls them (Confirm). An entry that configuration holds already, under any name, is not added
// again.
func admit[W any](ctx context.Context, a Admission, k kind[W], configuration string, o Object, want []W) error {
	if len(want) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, AdmitTimeout)
	defer cancel()
	if a.Cache != nil {
		cfg := k.object()
		if err := a.Cache.Get(ctx, client.ObjectKey{Name: configuration}, cfg); err == nil && registered(k, read(k, cfg), want) {
			return nil
		}
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	for {
		cfg := k.object()
		if err := a.Live.Get(ctx, client.ObjectKey{Name: configuration}, cfg); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("%s %s is missing (the install creates it)", k.name, configuration)
			}
			return fmt.Errorf("read %s %s: %v", k.name, configuration, err)
		}
		t := read(k, cfg)
		serial, changed := t.add(k, o, want, metav1.NewTime(now()))
		if !changed {
			if serial == 0 {
				return nil
			}
			return Confirm(ctx, a.Client, a.Namespace, configuration, serial)
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

// registered says every entry of want is held by t and none only as a pending entry: the API
// server has had them since an earlier admission confirmed them or the registrar wrote them.
func registered[W any](k kind[W], t table[W], want []W) bool {
	for _, w := range want {
		name := t.covering(k, w)
		if _, pending := t.pending[name]; name == "" || pending {
			return false
		}
	}
	return true
}

// add adds to t the entries of want it does not cover, as pending entries of o, and says
// whether it changed t; serial is the write to confirm (0: none, every entry was registered).
func (t *table[W]) add(k kind[W], o Object, want []W, now metav1.Time) (serial int64, changed bool) {
	for _, w := range want {
		if name := t.covering(k, w); name != "" {
			if _, pending := t.pending[name]; pending {
				serial = t.serial // not confirmed yet: an admission under way, or one that gave up
			}
			continue
		}
		name := pendingName(k, w, o.Generation)
		*k.nameOf(&w) = name
		t.webhooks = append(t.webhooks, w)
		t.pending[name] = Pending{Object: o.Key, Generation: o.Generation, Since: now}
		changed = true
	}
	if changed {
		t.serial++
		serial = t.serial
	}
	return serial, changed
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
