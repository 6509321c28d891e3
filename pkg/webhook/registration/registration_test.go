package registration

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const testConfiguration = "kruise-test-entries"

func entry(name, app string) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{Name: name,
		ClientConfig:   admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443/x/" + app)},
		ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func testClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: testConfiguration}}).Build()
}

func configuration(t *testing.T, c client.Client) (*admissionregistrationv1.MutatingWebhookConfiguration, table[admissionregistrationv1.MutatingWebhook]) {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: testConfiguration}, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg, read(mutating, cfg)
}

func names(t table[admissionregistrationv1.MutatingWebhook]) []string {
	var out []string
	for _, w := range t.webhooks {
		out = append(out, w.Name)
	}
	return out
}

var probe = ProbeEntry{ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443/")}, Namespace: "kruise-system"}

// A registrar writes its entries and the probe entry once, with serial 1, and not again while
// nothing changes; a change is a new serial, which the probe entry's path carries.
func TestSyncWritesOnChangeWithSerial(t *testing.T) {
	ctx := context.Background()
	c := testClient(t)
	s := Sync{Configuration: testConfiguration, Probe: probe, Seen: map[string]int64{"x": 1}}
	want := []admissionregistrationv1.MutatingWebhook{entry("a.test.kruise.io", "a")}
	for i, wantWrote := range []bool{true, false} {
		got, err := SyncMutating(ctx, c, s, want)
		if err != nil || got.Wrote != wantWrote {
			t.Fatalf("sync %d: wrote %v, err %v; want wrote %v", i, got.Wrote, err, wantWrote)
		}
	}
	cfg, tab := configuration(t, c)
	if tab.serial != 1 || strings.Join(names(tab), ",") != "a.test.kruise.io,"+ProbeEntryName {
		t.Fatalf("serial %d, entries %v", tab.serial, names(tab))
	}
	if url := *cfg.Webhooks[1].ClientConfig.URL; url != "https://127.0.0.1:9443"+ProbePath+testConfiguration+"/1" {
		t.Errorf("probe entry calls %s", url)
	}
	want = append(want, entry("b.test.kruise.io", "b"))
	if got, err := SyncMutating(ctx, c, s, want); err != nil || !got.Wrote {
		t.Fatalf("a new entry was not written: %+v %v", got, err)
	}
	if _, tab = configuration(t, c); tab.serial != 2 {
		t.Errorf("serial %d after the second write, want 2", tab.serial)
	}
}

// put writes t into the test configuration.
func put(t *testing.T, c client.Client, cfg *admissionregistrationv1.MutatingWebhookConfiguration, tab table[admissionregistrationv1.MutatingWebhook]) {
	t.Helper()
	tab.write(mutating, cfg, probe)
	if err := c.Update(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

// An admission adds the entry of a version the registrar has not seen as a pending entry, and
// records its need of an entry already in place; a second admission of the same version changes
// nothing; the registrar keeps an entry while a need holds — until it has seen the need's
// generation, and past PendingTTL only while the API server holds that generation.
func TestPendingEntriesLiveUntilTheRegistrarHasSeenThem(t *testing.T) {
	c := testClient(t)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	cfg, tab := configuration(t, c)
	o := Object{Key: "x", Generation: 2}
	want := []admissionregistrationv1.MutatingWebhook{entry("x.test.kruise.io", "new")}
	if !tab.add(mutating, o, want, metav1.NewTime(now)) || tab.serial != 1 || len(tab.pending) != 1 {
		t.Fatalf("add: serial %d pending %v", tab.serial, tab.pending)
	}
	pending := names(tab)[0]
	if !strings.HasSuffix(pending, ".pending.kruise.io") || !strings.Contains(pending, "x.test.g2-") {
		t.Errorf("pending entry named %s", pending)
	}
	if tab.add(mutating, o, want, metav1.NewTime(now)) {
		t.Error("the same version's admission changed the configuration again")
	}
	put(t, c, cfg, tab)

	var live struct {
		gen   int64
		found bool
	}
	s := Sync{Configuration: testConfiguration, Probe: probe, Now: func() time.Time { return now },
		Seen: map[string]int64{"x": 1},
		Live: func(context.Context, string) (int64, bool, error) { return live.gen, live.found, nil }}
	steady := []admissionregistrationv1.MutatingWebhook{entry("x.test.kruise.io", "old")}
	sync := func(what string, wantPending bool) {
		t.Helper()
		got, err := SyncMutating(context.Background(), c, s, steady)
		if err != nil {
			t.Fatal(err)
		}
		_, tab := configuration(t, c)
		has := tab.find(mutating, pending) != nil
		if has != wantPending || (got.Pending > 0) != wantPending {
			t.Errorf("%s: pending entry kept %v (%d needs), want %v; entries %v", what, has, got.Pending, wantPending, names(tab))
		}
		if tab.find(mutating, "x.test.kruise.io") == nil {
			t.Errorf("%s: the registrar's own entry is missing", what)
		}
	}
	sync("generation 1 seen, fresh", true)
	now = now.Add(PendingTTL + time.Second)
	live.gen, live.found = 2, true
	sync("expired, generation 2 stored but not seen", true)
	live.gen = 1
	sync("expired, generation 2 never stored", false)
}

// An admission that finds its entry in place records its need of it, so that a registrar that
// does not know the object yet, or knows an older spec of it, keeps that entry (beside its own,
// under a pending name) until it has seen the object's version.
func TestNeedOfAnEntryInPlaceKeepsIt(t *testing.T) {
	c := testClient(t)
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	s := Sync{Configuration: testConfiguration, Probe: probe, Now: func() time.Time { return now }}
	s.Seen = map[string]int64{"x": 1}
	gen1 := []admissionregistrationv1.MutatingWebhook{entry("x.test.kruise.io", "a")}
	if _, err := SyncMutating(context.Background(), c, s, gen1); err != nil {
		t.Fatal(err)
	}
	// Generation 3 selects as generation 1 did; the registrar has seen only generation 2 (b).
	cfg, tab := configuration(t, c)
	if !tab.add(mutating, Object{Key: "x", Generation: 3}, gen1, metav1.NewTime(now)) {
		t.Fatal("the need of an entry in place was not recorded")
	}
	if len(tab.webhooks) != 2 { // x.test and the probe entry: nothing added
		t.Fatalf("entries %v", names(tab))
	}
	put(t, c, cfg, tab)
	s.Seen["x"] = 2
	if _, err := SyncMutating(context.Background(), c, s, []admissionregistrationv1.MutatingWebhook{entry("x.test.kruise.io", "b")}); err != nil {
		t.Fatal(err)
	}
	_, tab = configuration(t, c)
	var selects []string
	for _, w := range tab.webhooks {
		if w.Name != ProbeEntryName {
			selects = append(selects, w.ObjectSelector.MatchLabels["app"])
		}
	}
	slices.Sort(selects)
	if strings.Join(selects, ",") != "a,b" {
		t.Fatalf("entries select %v (%v), want generation 3's a kept beside the registrar's b", selects, names(tab))
	}
	s.Seen["x"] = 3
	if _, err := SyncMutating(context.Background(), c, s, gen1); err != nil {
		t.Fatal(err)
	}
	if _, tab = configuration(t, c); len(tab.webhooks) != 2 || len(tab.pending) != 0 {
		t.Errorf("once generation 3 is seen: entries %v, needs %v", names(tab), tab.pending)
	}
}

// A probe's answer is read from the API server's error: the serial of its own configuration only.
func TestProbeAnswer(t *testing.T) {
	msg := `admission webhook "registration-probe.kruise.io" denied the request: ` + probeMessage + testConfiguration + "/17"
	if n, ok := probeAnswer(errors.New(msg), testConfiguration); !ok || n != 17 {
		t.Errorf("read %d, %v from %q", n, ok, msg)
	}
	if _, ok := probeAnswer(errors.New(msg), "kruise-other"); ok {
		t.Error("another configuration's answer was read")
	}
	if _, ok := probeAnswer(nil, testConfiguration); ok {
		t.Error("no error read as an answer")
	}
}

// Pending names never meet a registrar's own names, and differ by content.
func TestPendingNames(t *testing.T) {
	a, b := PendingName("ns.x.podunavailablebudget.kruise.io", 2, "aa"), PendingName("ns.x.podunavailablebudget.kruise.io", 2, "bb")
	if a == b || !strings.HasSuffix(a, ".pending.kruise.io") {
		t.Errorf("pending names %s, %s", a, b)
	}
	long := PendingName(strings.Repeat("n", 250)+".sidecarset.kruise.io", 1, "aa")
	if len(long) > 253 || !strings.HasSuffix(long, ".pending.kruise.io") {
		t.Errorf("a long pending name %s (%d)", long, len(long))
	}
}
