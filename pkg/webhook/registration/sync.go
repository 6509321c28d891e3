package registration

import (
	"context"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/platform/liveread"
)

// PendingTTL is how long a registrar keeps a pending entry (Pending) without asking the API
// server whether its object version was stored: longer than any admission takes.
const PendingTTL = 2 * time.Minute

// Sync is what a registrar's write of its configuration needs besides its entries.
type Sync struct {
	// Configuration names the configuration (the install creates it empty); Without says what is
	// lost while it is missing (e.g. "no SidecarSet is injected").
	Configuration, Without string
	// Probe says where the probe entry calls and the manager's namespace.
	Probe ProbeEntry
	// Seen are, by key, the generations of the objects the entries were computed from.
	Seen map[string]int64
	// Live reads object's stored generation from the API server (found false: there is none);
	// nil: an expired pending entry is dropped.
	Live func(ctx context.Context, object string) (generation int64, found bool, err error)
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Synced is what a registrar's write did.
type Synced struct {
	// Wrote says the configuration was written.
	Wrote bool
	// Pending counts the pending entries kept: the registrar looks again within PendingTTL.
	Pending int
}

// SyncMutating writes want, plus the pending entries still needed and the probe entry, as the
// webhooks of the MutatingWebhookConfiguration s.Configuration when they differ from what is
// registered.
func SyncMutating(ctx context.Context, c client.Client, s Sync, want []admissionregistrationv1.MutatingWebhook) (Synced, error) {
	return sync(ctx, c, mutating, s, want)
}

// SyncValidating is SyncMutating for a ValidatingWebhookConfiguration.
func SyncValidating(ctx context.Context, c client.Client, s Sync, want []admissionregistrationv1.ValidatingWebhook) (Synced, error) {
	return sync(ctx, c, validating, s, want)
}

func sync[W any](ctx context.Context, c client.Client, k kind[W], s Sync, want []W) (Synced, error) {
	cfg := k.object()
	if err := c.Get(ctx, client.ObjectKey{Name: s.Configuration}, cfg); err != nil {
		if apierrors.IsNotFound(err) {
			return Synced{}, fmt.Errorf("%s %s is missing (the install creates it): %s", k.name, s.Configuration, s.Without)
		}
		return Synced{}, err
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	have := read(k, cfg)
	out := table[W]{webhooks: append([]W(nil), want...), pending: map[string][]Pending{}, serial: have.serial}
	for name, needs := range have.pending {
		if w := have.find(k, name); w != nil {
			out.carry(k, name, *w, stillNeeded(ctx, s, needs, now()))
		}
	}
	res := Synced{Pending: len(out.pending)}
	same := cfg.DeepCopyObject().(client.Object)
	out.write(k, same, s.Probe)
	if equality.Semantic.DeepEqual(*k.webhooks(same), *k.webhooks(cfg)) &&
		same.GetAnnotations()[PendingAnnotation] == cfg.GetAnnotations()[PendingAnnotation] {
		return res, nil
	}
	out.serial++
	out.write(k, cfg, s.Probe)
	if err := c.Update(ctx, cfg); err != nil {
		return res, fmt.Errorf("register the webhooks of %s %s: %w", k.name, s.Configuration, err)
	}
	res.Wrote = true
	return res, nil
}

// stillNeeded are the needs that still hold (keepPending).
func stillNeeded(ctx context.Context, s Sync, needs []Pending, now time.Time) []Pending {
	var out []Pending
	for _, p := range needs {
		if keepPending(ctx, s, p, now) {
			out = append(out, p)
		}
	}
	return out
}

// carry keeps entry w, named name, in t for needs (none: not kept): as it is, unless t holds
// another entry of that name — the registrar's, from a view of the object older than a need —
// and then beside it, under a pending name.
func (t *table[W]) carry(k kind[W], name string, w W, needs []Pending) {
	if len(needs) == 0 {
		return
	}
	switch mine := t.find(k, name); {
	case mine == nil:
		t.webhooks = append(t.webhooks, w)
	case !equality.Semantic.DeepEqual(*mine, w):
		name = pendingName(k, w, needs[len(needs)-1].Generation)
		*k.nameOf(&w) = name
		if t.find(k, name) == nil {
			t.webhooks = append(t.webhooks, w)
		}
	}
	t.pending[name] = append(t.pending[name], needs...)
}

// keepPending says whether need p still holds: until the registrar has seen p's generation, and
// past PendingTTL only while the API server holds that generation.
func keepPending(ctx context.Context, s Sync, p Pending, now time.Time) bool {
	if gen, ok := s.Seen[p.Object]; ok && gen >= p.Generation {
		return false
	}
	if now.Sub(p.Since.Time) < PendingTTL {
		return true
	}
	if s.Live == nil {
		return false
	}
	gen, found, err := s.Live(ctx, p.Object)
	if err != nil {
		return true
	}
	return found && gen >= p.Generation
}

// LiveGeneration is a Sync.Live that reads an object by its key (name, or namespace/name) from r,
// normally the API server, listing newList's kind by name (a list and watch are all a registrar
// may do).
func LiveGeneration(r client.Reader, newList func() client.ObjectList) func(ctx context.Context, key string) (int64, bool, error) {
	return func(ctx context.Context, key string) (int64, bool, error) {
		ns, name, namespaced := strings.Cut(key, "/")
		if !namespaced {
			ns, name = "", key
		}
		obj, ok, err := liveread.ByName[client.Object](ctx, r, newList(), ns, name)
		if err != nil || !ok {
			return 0, false, err
		}
		return obj.GetGeneration(), true, nil
	}
}
