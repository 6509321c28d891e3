package spreadplacement

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
)

// deciding is a Decider that says this replica decides.
type deciding struct{}

func (deciding) Deciding() bool { return true }
func (deciding) Leading() bool  { return true }
func (deciding) Forward(context.Context, string, admission.Request) (admission.Response, bool) {
	return admission.Response{}, false
}

// admit has the handler admit a CloneSet pod named name and returns its subset.
func admit(t *testing.T, hs *harness, name string) string {
	t.Helper()
	pod := podOf(name, "apps.kruise.io/v1alpha1", "CloneSet", "web")
	raw, _ := json.Marshal(pod)
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns",
		Name: name, Object: runtime.RawExtension{Raw: raw}}}
	resp := hs.h.handle(context.Background(), req, "ns/spread")
	if !resp.Allowed {
		t.Errorf("creation of %s refused: %v", name, resp.Result)
		return ""
	}
	if len(resp.Patches) == 0 {
		return ""
	}
	patch, _ := json.Marshal(resp.Patches)
	return subsetOf(t, applyPatch(t, raw, patch))
}

// flushed waits until every decision is written.
func flushed(t *testing.T, hs *harness) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hs.h.Flush(ctx)
	if ctx.Err() != nil {
		t.Fatal("decisions not written within 10s")
	}
}

// On the deciding replica concurrent creations are answered while no status write gets through:
// the quota still holds exactly (10 pods in a), and the writes behind record all ten, batched.
func TestDecidesFromMemory(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(10))
	hs := newHarness(t, 0, webCloneSet(), ws)
	hs.h.Decider = deciding{}
	hs.gate = make(chan struct{})
	const n = 20
	subsets := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { subsets[i] = admit(t, hs, fmt.Sprintf("web-%d", i)) })
	}
	answered := make(chan struct{})
	go func() { wg.Wait(); close(answered) }()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("admissions waited for the held status write")
	}
	inA := 0
	for _, s := range subsets {
		if s == "a" {
			inA++
		}
	}
	if inA != 10 {
		t.Errorf("%d pods placed in a, want 10 (its quota): %v", inA, subsets)
	}
	close(hs.gate)
	flushed(t, hs)
	st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
	if len(st[0].CreatingPods) != 10 || st[0].MissingReplicas != 0 {
		t.Errorf("status after the writes behind: %+v", st)
	}
	if w := hs.writes.Load(); w >= 10 {
		t.Errorf("%d status writes for 10 placements: not batched", w)
	}
}

// Another writer (the controller's recount) changes the status while a decision is still behind:
// the next decisions read the newer status with the unwritten one replayed on it, and the write
// behind, refused for the stale resourceVersion, is replayed on a fresh read.
func TestReplaysOnAnotherWriter(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(3))
	hs := newHarness(t, 0, webCloneSet(), ws)
	hs.h.Decider = deciding{}
	hs.gate = make(chan struct{})
	if got := admit(t, hs, "web-1"); got != "a" {
		t.Fatalf("web-1 in %q, want a", got)
	}
	// The controller counts web-0, a pod it found in a: one replica missing there.
	cur := hs.spread(t)
	cur.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{spreadrules.VersionIgnored: {
		{Name: "a", MissingReplicas: 1, CreatingPods: map[string]metav1.Time{"web-0": metav1.NewTime(now)}},
		{Name: "b", MissingReplicas: -1}}}
	if err := hs.raw.Status().Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	// web-0 and web-1 fill a's last two places: web-2 goes to b.
	if got := admit(t, hs, "web-2"); got != "b" {
		t.Errorf("web-2 in %q, want b (a holds web-0, and web-1 behind)", got)
	}
	close(hs.gate)
	flushed(t, hs)
	st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
	if _, ok := st[0].CreatingPods["web-1"]; !ok || len(st[0].CreatingPods) != 2 || st[0].MissingReplicas != 0 {
		t.Errorf("status after the replay: %+v", st)
	}
}

// The first decision of a replica that just began deciding reads the spread from the API server:
// its predecessor's last write may not be in the cache yet.
func TestNewDeciderReadsLive(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{spreadrules.VersionIgnored: {
		{Name: "a", MissingReplicas: 0, CreatingPods: map[string]metav1.Time{"web-0": metav1.NewTime(now), "web-9": metav1.NewTime(now)}},
		{Name: "b", MissingReplicas: -1}}}
	hs := newHarness(t, 0, webCloneSet(), ws)
	hs.h.Decider = deciding{}
	stale := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	stale.ResourceVersion = "1"
	hs.h.Reader = staleSpread{Reader: hs.c, ws: stale}
	if got := admit(t, hs, "web-1"); got != "b" {
		t.Errorf("web-1 in %q, want b: a is full on the API server", got)
	}
}

// staleSpread is a cache that has not seen the spread's last status write.
type staleSpread struct {
	client.Reader
	ws *appsv1alpha1.WorkloadSpread
}

func (s staleSpread) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if out, ok := obj.(*appsv1alpha1.WorkloadSpread); ok {
		s.ws.DeepCopyInto(out)
		return nil
	}
	return s.Reader.Get(ctx, key, obj, opts...)
}

// The pod webhook's pods are placed by whichever spread of their namespace spreads them, without
// an entry naming it; a pod already placed, or one no spread selects, is left as it is.
func TestPlaceAny(t *testing.T) {
	other := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "other")
	other.Name = "a-other" // listed first: it does not spread web's pods
	hs := newHarness(t, 0, webCloneSet(), other, spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web"))
	ctx := context.Background()
	placed, err := hs.h.PlaceAny(ctx, podOf("web-1", "apps.kruise.io/v1alpha1", "CloneSet", "web"), false)
	if err != nil || placed == nil || subsetOf(t, placed) != "a" {
		t.Fatalf("PlaceAny = %v, %v; want the pod in subset a of spread", placed, err)
	}
	if again, err := hs.h.PlaceAny(ctx, placed, false); err != nil || again != nil {
		t.Errorf("a placed pod placed again: %v, %v", again, err)
	}
	if none, err := hs.h.PlaceAny(ctx, podOf("x-1", "apps.kruise.io/v1alpha1", "CloneSet", "x"), false); err != nil || none != nil {
		t.Errorf("a pod of no spread placed: %v, %v", none, err)
	}
	if st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]; len(st) == 0 || len(st[0].CreatingPods) != 1 {
		t.Errorf("status: %+v", st)
	}
}

// On the deciding replica too a deletion is answered only once its release is written: the
// controller must not see the pod go before the freed replica is in the status.
func TestDeciderWritesReleasesFirst(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{
		spreadrules.VersionIgnored: {{Name: "a"}, {Name: "b", MissingReplicas: -1}}}
	hs := newHarness(t, 0, webCloneSet(), ws)
	hs.h.Decider = deciding{}
	hs.gate = make(chan struct{})
	req := deletionOf(hs.store(t, placedPod("web-1", "a")))
	answered := make(chan struct{})
	go func() { hs.h.handle(context.Background(), req, "ns/spread"); close(answered) }()
	select {
	case <-answered:
		t.Fatal("the deletion was answered before its release was written")
	case <-time.After(200 * time.Millisecond):
	}
	// Meanwhile a creation takes the freed replica, answered at once.
	if got := admit(t, hs, "web-2"); got != "a" {
		t.Errorf("web-2 in %q, want a (web-1's replica)", got)
	}
	close(hs.gate)
	<-answered
	flushed(t, hs)
	st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored][0]
	if _, ok := st.DeletingPods["web-1"]; !ok || st.MissingReplicas != 0 || len(st.CreatingPods) != 1 {
		t.Errorf("status: %+v", st)
	}
}
