package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
)

// The checks of the kinds that place pods (kinds.go), of web's budget under evictions, and of
// pods made beyond a workload's replicas.

// peers are the live pods cur's maxUnavailable is counted over: its workload's, or for ud its
// subset's (each subset is a CloneSet of its own).
func (ch *checker) peers(cur *corev1.Pod) []*corev1.Pod {
	pods := ch.live(cur.Labels["app"])
	if cur.Labels["app"] != udName {
		return pods
	}
	out := pods[:0]
	for _, p := range pods {
		if p.Labels[subsetLabel] == cur.Labels[subsetLabel] {
			out = append(out, p)
		}
	}
	return out
}

// budgetOut is how many of web's pods its PodUnavailableBudget counts out of service once cur
// goes out too: the fewest replicas asked of web within the last 30 s less its other live,
// available pods. A pod evicted and not yet replaced by a ready one counts, as the budget counts it.
func (ch *checker) budgetOut(cur *corev1.Pod) (int, bool) {
	asked, ok := ch.replicas.min("web", 30*time.Second)
	if !ok {
		return 0, false
	}
	availableOthers := 0
	for _, p := range ch.live("web") {
		if p.UID != cur.UID && available(p) {
			availableOthers++
		}
	}
	return int(asked) - availableOthers, true
}

// surplusCarries reports whether a CloneSet taking cur out still keeps the replicas asked less its
// maxUnavailable available (the fewest replicas asked within the last 30 s): its pods beyond
// the replicas (a scale-in not made yet, orphans adopted) carry the rest, as the CloneSet counts
// its budget (available − (replicas − maxUnavailable)) and Kubernetes' Deployment does.
func (ch *checker) surplusCarries(w workload, cur *corev1.Pod) bool {
	if w.Kind != "CloneSet" {
		return false
	}
	asked, ok := ch.replicas.min(w.Name, 30*time.Second)
	if !ok {
		return false
	}
	availableOthers := 0
	for _, p := range ch.peers(cur) {
		if p.UID != cur.UID && available(p) {
			availableOthers++
		}
	}
	return availableOthers >= int(asked)-w.MaxUnavailable
}

// evictedWithinBudget checks an eviction of web's (before is the pod until then): an available
// pod is let go only within web's PodUnavailableBudget.
func (ch *checker) evictedWithinBudget(before *corev1.Pod) {
	if before.Labels["app"] != "web" || !available(before) {
		return
	}
	ch.checks.Add(1)
	if ch.asks.releasedWithin("web", releaseRecount, time.Now()) {
		return // the budget had not recounted a pod released from web (takenOut says more)
	}
	out, ok := ch.budgetOut(before)
	if !ok || out <= budgetMaxUnavailable {
		return
	}
	var detail []string
	for _, p := range ch.live("web") {
		if p.UID != before.UID && !available(p) {
			detail = append(detail, describe(p))
		}
	}
	ch.violateOn(checkTakeOut, []string{before.Name}, "an eviction of web's pod %s (uid %s) was let through with %d pods out of service (replicas asked lately %s), above its PodUnavailableBudget's maxUnavailable %d; unavailable: %s",
		before.Name, before.UID, out, ch.replicas.describe("web", 30*time.Second), budgetMaxUnavailable, strings.Join(detail, "; ")+"; the budget's status just after: "+ch.budgetStatus())
}

// beyondReplicas checks a new pod of a scalable workload: its workload's live pods (those of an
// owner the driver deleted with its pods left out) are no more than the most replicas asked
// within the last 30 s.
func (ch *checker) beyondReplicas(pod *corev1.Pod) {
	w, ok := workloadNamed(pod.Labels["app"])
	if !ok || !w.Scalable {
		return
	}
	asked, ok := ch.replicas.max(w.Name, 30*time.Second)
	if !ok {
		return
	}
	ch.checks.Add(1)
	var live []string
	for _, p := range ch.live(w.Name) {
		if ref := metav1.GetControllerOf(p); (ref != nil && ch.asks.isDeletedOwner(ref.UID)) || terminal(p) {
			continue
		}
		live = append(live, p.Name)
	}
	if int32(len(live)) > asked {
		ch.violateOn(checkExtra, live, "%s %s's pod %s was created with %d live pods, above the most replicas asked within 30 s (%s): %s",
			w.Kind, w.Name, pod.Name, len(live), ch.replicas.describe(w.Name, 30*time.Second), strings.Join(live, ", "))
	}
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// spreadPlaced notes the subset the spread placed a new pod of api in; 2 s later (the deletions
// the spread counted on being stored by then) the subset is checked against its maxReplicas.
func (ch *checker) spreadPlaced(pod *corev1.Pod) {
	if pod.Labels["app"] != "api" {
		return
	}
	m := spreadrules.MatchedOf(pod)
	if m == nil || m.Name != spreadName {
		return
	}
	ch.placed.Store(pod.UID, m.Subset)
	if m.Subset == "a" {
		time.AfterFunc(2*time.Second, func() { ch.spreadWithin("a", spreadMaxA) })
	}
}

// spreadWithin checks that subset holds no more than maxReplicas of the live pods of api placed
// in it at their creation.
func (ch *checker) spreadWithin(subset string, maxReplicas int) {
	ch.checks.Add(1)
	var in []string
	for _, p := range ch.live("api") {
		if s, ok := ch.placed.Load(p.UID); ok && s == subset && !terminal(p) {
			in = append(in, p.Name)
		}
	}
	if len(in) > maxReplicas {
		ch.violateOn(checkSpread, in, "WorkloadSpread %s's subset %s holds %d live pods placed at their creation, above its maxReplicas %d: %s",
			spreadName, subset, len(in), maxReplicas, strings.Join(in, ", "))
	}
}

// zoneKept checks a new pod of db: when the PersistentPodState recorded a zone for its name at
// least 5 s ago (the manager's cache has it), its ordinal is within the fewest replicas asked
// within a minute (so the state was not dropped for a scale-in) and db was not deleted or
// created again within a minute (which drops every state), the pod is created in that zone.
func (ch *checker) zoneKept(pod *corev1.Pod) {
	if pod.Labels["app"] != "db" {
		return
	}
	zone, at, ok := ch.states.get(pod.Name)
	if !ok || time.Since(at) < 5*time.Second || ch.asks.recreatedWithin("db", time.Minute, time.Now()) {
		return
	}
	if asked, ok := ch.replicas.min("db", time.Minute); !ok || ordinal.OrdinalOf("db", pod.Name) >= int(asked) {
		return
	}
	ch.checks.Add(1)
	if got := pod.Spec.NodeSelector[zoneLabel]; got != zone {
		ch.violateOn(checkTopology, []string{pod.Name}, "pod %s (uid %s) was created with node selector %s=%q; PersistentPodState %s recorded zone %q for it since %s",
			pod.Name, pod.UID, zoneLabel, got, ppsName, zone, at.Format("15:04:05.000"))
	}
}

// recordedZones are the zones the PersistentPodState recorded, by pod name, with when the checker
// first saw each.
type recordedZones struct {
	mu     sync.Mutex
	states map[string]recordedZone
}

type recordedZone struct {
	zone  string
	since time.Time
}

func newRecordedZones() *recordedZones { return &recordedZones{states: map[string]recordedZone{}} }

func (r *recordedZones) get(name string) (string, time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.states[name]
	return s.zone, s.since, ok
}

// set replaces the recorded zones with those of status, keeping when each unchanged one was first
// seen.
func (r *recordedZones) set(status map[string]appsv1alpha1.PersistentPodStatePodState, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := map[string]recordedZone{}
	for name, st := range status {
		zone, ok := st.NodeTopologyLabels[zoneLabel]
		if !ok {
			continue
		}
		if old, ok := r.states[name]; ok && old.zone == zone {
			next[name] = old
			continue
		}
		next[name] = recordedZone{zone: zone, since: now}
	}
	r.states = next
}

// poll reads the PersistentPodState every second until ctx ends; a failed read keeps what it had.
func (r *recordedZones) poll(ctx context.Context, c client.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		pps := &appsv1alpha1.PersistentPodState{}
		getCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Get(getCtx, client.ObjectKey{Namespace: ns, Name: ppsName}, pps)
		cancel()
		if err == nil {
			r.set(pps.Status.PodStates, time.Now())
		}
	}
}

// describeAll describes pods for a violation.
func describeAll(pods []*corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, describe(p))
	}
	return strings.Join(out, "; ")
}

// budgetStatus reads web's PodUnavailableBudget as it is now (just after a violation), for the
// report.
func (ch *checker) budgetStatus() string {
	if ch.client == nil {
		return "(no client to read it)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := ch.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, pub); err != nil {
		return err.Error()
	}
	s := pub.Status
	return fmt.Sprintf("rv %s, observed generation %d, available %d, desired %d, allowed %d, total %d, disrupted %v, unavailable %v",
		pub.ResourceVersion, s.ObservedGeneration, s.CurrentAvailable, s.DesiredAvailable, s.UnavailableAllowed, s.TotalReplicas, s.DisruptedPods, s.UnavailablePods)
}
