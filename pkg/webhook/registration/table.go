package registration

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations of a dynamically registered configuration, written with its entries.
const (
	// SerialAnnotation counts the writes of the configuration's entries; the probe entry's path
	// carries the count, so that a probe tells which write the API server has loaded.
	SerialAnnotation = "apps.kruise.io/registration-serial"
	// PendingAnnotation lists, as JSON by entry name, the object versions whose admissions need an
	// entry that their registrar may not know of yet (Pending): entries they added, or entries they
	// found in place and rely on.
	PendingAnnotation = "apps.kruise.io/registration-pending"
)

// Pending is the need of an admission of Generation of Object (its registrar's key), at Since,
// for an entry. The registrar keeps the entry while one of its needs holds: until it has seen that
// generation (its own entries then cover it), or, once PendingTTL has passed, until the API
// server shows no such generation was stored.
type Pending struct {
	Object     string      `json:"object"`
	Generation int64       `json:"generation"`
	Since      metav1.Time `json:"since"`
}

// PendingName names the entry an admission adds for generation of the object whose own entry is
// named entry, tagged by its content: no registrar's entry ends in ".pending.kruise.io", and
// entry names differ by object, so no two names meet.
func PendingName(entry string, generation int64, tag string) string {
	return Name(fmt.Sprintf("%s.g%d-%s", strings.TrimSuffix(entry, ".kruise.io"), generation, tag), ".pending.kruise.io")
}

// kind adapts one of the two configuration kinds, whose webhooks share no Go type.
type kind[W any] struct {
	name     string
	object   func() client.Object
	webhooks func(client.Object) *[]W
	nameOf   func(*W) *string
	probe    func(ProbeEntry) W
}

var mutating = kind[admissionregistrationv1.MutatingWebhook]{
	name:   "MutatingWebhookConfiguration",
	object: func() client.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
	webhooks: func(o client.Object) *[]admissionregistrationv1.MutatingWebhook {
		return &o.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks
	},
	nameOf: func(w *admissionregistrationv1.MutatingWebhook) *string { return &w.Name },
	probe:  ProbeEntry.Mutating,
}

var validating = kind[admissionregistrationv1.ValidatingWebhook]{
	name:   "ValidatingWebhookConfiguration",
	object: func() client.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
	webhooks: func(o client.Object) *[]admissionregistrationv1.ValidatingWebhook {
		return &o.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks
	},
	nameOf: func(w *admissionregistrationv1.ValidatingWebhook) *string { return &w.Name },
	probe:  ProbeEntry.Validating,
}

// table is a configuration's entries as read: the webhooks, the pending records and the serial.
type table[W any] struct {
	webhooks []W
	pending  map[string][]Pending
	serial   int64
}

func read[W any](k kind[W], cfg client.Object) table[W] {
	t := table[W]{webhooks: *k.webhooks(cfg), pending: map[string][]Pending{}}
	a := cfg.GetAnnotations()
	t.serial, _ = strconv.ParseInt(a[SerialAnnotation], 10, 64)
	if raw := a[PendingAnnotation]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &t.pending); err != nil {
			t.pending = map[string][]Pending{} // unreadable: nothing is pending (the entries stay until the next write)
		}
	}
	return t
}

// write puts t into cfg: its webhooks sorted by name with the probe entry of t.serial last.
func (t table[W]) write(k kind[W], cfg client.Object, probe ProbeEntry) {
	hooks := t.sorted(k)
	probe.Configuration, probe.Serial = cfg.GetName(), t.serial
	hooks = append(hooks, k.probe(probe))
	*k.webhooks(cfg) = hooks
	a := cfg.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[SerialAnnotation] = strconv.FormatInt(t.serial, 10)
	delete(a, PendingAnnotation)
	if len(t.pending) > 0 {
		raw, _ := json.Marshal(t.pending)
		a[PendingAnnotation] = string(raw)
	}
	cfg.SetAnnotations(a)
}

// sorted are t's webhooks but the probe entry, sorted by name.
func (t table[W]) sorted(k kind[W]) []W {
	out := make([]W, 0, len(t.webhooks)+1)
	for i := range t.webhooks {
		if *k.nameOf(&t.webhooks[i]) != ProbeEntryName {
			out = append(out, t.webhooks[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return *k.nameOf(&out[i]) < *k.nameOf(&out[j]) })
	return out
}

// find is the webhook named name, or nil.
func (t table[W]) find(k kind[W], name string) *W {
	for i := range t.webhooks {
		if *k.nameOf(&t.webhooks[i]) == name {
			return &t.webhooks[i]
		}
	}
	return nil
}

// covering is the name of a webhook of t that is w but for its name, or "".
func (t table[W]) covering(k kind[W], w W) string {
	*k.nameOf(&w) = ""
	for i := range t.webhooks {
		have := t.webhooks[i]
		name := *k.nameOf(&have)
		*k.nameOf(&have) = ""
		if name != ProbeEntryName && equality.Semantic.DeepEqual(have, w) {
			return name
		}
	}
	return ""
}
