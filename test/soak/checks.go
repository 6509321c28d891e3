package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

// The invariants, each a named check run on the true objects as a watch delivers them (in the API
// server's order), never on Kruise's own status:
const (
	// checkTakeOut: when Kruise takes a pod out of service for an update (its InPlaceUpdateReady
	// turns False), the workload's unavailable pods, that one included, are within its
	// maxUnavailable, and web's within its PodUnavailableBudget; an eviction of an available pod
	// of web's is let through only within the budget too (for both, the budget counts a pod
	// evicted and not yet replaced by a ready one).
	checkTakeOut = "update-within-maxUnavailable-and-budget"
	// checkDeletion: a pod goes only because a spec asked (a scale-in: more live pods than the
	// replicas asked within the last 30 s, or a StatefulSet's ordinal beyond them), the driver
	// evicted it or deleted its workload with it: an image change never recreates a pod, and no
	// pod is deleted that no one asked to delete.
	checkDeletion = "no-unasked-pod-deletion"
	// checkOrdinal: no two live pods of the StatefulSet with one ordinal.
	checkOrdinal = "one-pod-per-ordinal"
	// checkClaims: no claim of the StatefulSet is deleted (its retention policy keeps them all).
	checkClaims = "claims-kept"
	// checkSidecar: every pod of the SidecarSet's selector is created with its sidecar.
	checkSidecar = "sidecar-injected"
	// checkConverge: after the last fault, every workload reaches its spec within the bound, its
	// status then what its pods show.
	checkConverge = "converges"
	// checkExtra: a workload never has more live pods than the most replicas asked of it within
	// the last 30 s: orphaned pods are adopted, not made anew, a released pod is replaced once.
	checkExtra = "no-pods-beyond-replicas"
	// checkSpread: no subset of the WorkloadSpread holds more live pods than its maxReplicas among
	// the pods it placed at their creation (while its webhook answered).
	checkSpread = "spread-within-maxReplicas"
	// checkTopology: a pod of the StatefulSet made again under a name whose zone the
	// PersistentPodState recorded is created with that zone as its node selector.
	checkTopology = "recreated-pod-keeps-its-zone"
)

// violation is the first breach of a check, with the objects involved.
type violation struct {
	Check, Message string
	At             time.Time
	// Pods are the pods it is about: the report adds who wrote to them (the audit log).
	Pods []string
}

// checker runs the checks on the pods and claims of the world's namespace.
type checker struct {
	pods     corelisters.PodLister
	client   client.Client
	replicas *replicaHistory
	evicted  *sync.Map
	asks     *asks
	// placed is the subset each pod of the spread's workload was placed in at its creation, by UID.
	placed sync.Map
	// states are the zones the PersistentPodState recorded, by pod name (polled).
	states *recordedZones
	// events are the namespace's events as they come, for the report.
	events eventLog
	checks atomic.Int64
	mu     sync.Mutex
	found  []violation
}

func newChecker(ctx context.Context, cs kubernetes.Interface, c client.Client, replicas *replicaHistory, evicted *sync.Map, asks *asks) (*checker, error) {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	ch := &checker{pods: f.Core().V1().Pods().Lister(), client: c, replicas: replicas, evicted: evicted, asks: asks, states: newRecordedZones()}
	go ch.states.poll(ctx, c)
	if _, err := f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { ch.podAdded(obj.(*corev1.Pod)) },
		UpdateFunc: func(old, cur any) {
			ch.podUpdated(old.(*corev1.Pod), cur.(*corev1.Pod))
		},
		DeleteFunc: func(obj any) {
			if pod, ok := obj.(*corev1.Pod); ok && pod.DeletionTimestamp == nil {
				ch.podGoes(pod, pod)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := f.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			if c := cur.(*corev1.PersistentVolumeClaim); c.DeletionTimestamp != nil && old.(*corev1.PersistentVolumeClaim).DeletionTimestamp == nil {
				ch.claimGoes(c)
			}
		},
		DeleteFunc: func(obj any) {
			if c, ok := obj.(*corev1.PersistentVolumeClaim); ok && c.DeletionTimestamp == nil {
				ch.claimGoes(c)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := f.Events().V1().Events().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if e, ok := obj.(*eventsv1.Event); ok {
				ch.events.add("event %s %s %s/%s: %s", e.Type, e.Reason, e.Regarding.Kind, e.Regarding.Name, e.Note)
			}
		},
	}); err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("the checker's %v informer did not sync", typ)
		}
	}
	return ch, nil
}

func (ch *checker) violate(check, format string, args ...any) {
	ch.violateOn(check, nil, format, args...)
}

func (ch *checker) violateOn(check string, pods []string, format string, args ...any) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.found = append(ch.found, violation{Check: check, Message: fmt.Sprintf(format, args...), At: time.Now(), Pods: pods})
}

func (ch *checker) violations() []violation {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return append([]violation(nil), ch.found...)
}

func (ch *checker) podAdded(pod *corev1.Pod) {
	ch.checks.Add(1)
	ch.beyondReplicas(pod)
	ch.spreadPlaced(pod)
	ch.zoneKept(pod)
	if pod.Labels["app"] == "web" && !hasContainer(pod, sidecarName) {
		ch.violate(checkSidecar, "pod %s (uid %s) of the SidecarSet's selector was created without sidecar %s", pod.Name, pod.UID, sidecarName)
	}
	if pod.Labels["app"] != "db" {
		return
	}
	ch.checks.Add(1)
	ord := ordinal.OrdinalOf("db", pod.Name)
	for _, other := range ch.live("db") {
		if other.UID != pod.UID && ordinal.OrdinalOf("db", other.Name) == ord {
			ch.violate(checkOrdinal, "pods %s (uid %s) and %s (uid %s) both hold ordinal %d", pod.Name, pod.UID, other.Name, other.UID, ord)
		}
	}
}

func (ch *checker) podUpdated(old, cur *corev1.Pod) {
	if cur.DeletionTimestamp != nil && old.DeletionTimestamp == nil {
		ch.podGoes(cur, old)
	}
	// Taking out a pod that is unavailable already (pending, restarting) changes no count.
	if available(old) && gate(cur) == corev1.ConditionFalse && cur.DeletionTimestamp == nil {
		ch.takenOut(cur)
	}
}

// releaseRecount is how long after a pod of web is released the budget checks allow for its
// controller's recount (a lagging cache, one of the faults, delays it by up to 5 s).
const releaseRecount = 10 * time.Second

// takenOut checks the unavailable pods of cur's workload as Kruise takes cur, available until
// then, out of service. Pods
// created in the last 5 s are left out (a replacement the driver's eviction made may not be ready
// yet when Kruise decided).
func (ch *checker) takenOut(cur *corev1.Pod) {
	app := cur.Labels["app"]
	w, ok := workloadNamed(app)
	if !ok {
		return
	}
	ch.checks.Add(1)
	var out, detail []string
	for _, p := range ch.peers(cur) {
		if p.UID == cur.UID || (time.Since(p.CreationTimestamp.Time) > 5*time.Second && !available(p)) {
			out = append(out, p.Name)
			detail = append(detail, describe(p))
		}
	}
	if len(out) > w.MaxUnavailable && !ch.surplusCarries(w, cur) {
		ch.violateOn(checkTakeOut, out, "%s %s took %s out of service with %d pods unavailable, above maxUnavailable %d (replicas asked lately: %s): %s",
			w.Kind, w.Name, cur.Name, len(out), w.MaxUnavailable, ch.replicas.describe(w.Name, 30*time.Second), strings.Join(detail, "; "))
	}
	// web's budget is counted as the budget counts it: over the replicas asked, so that a pod
	// evicted and not yet replaced by a ready one counts, and the surplus pods of a scale-in do not
	// (desiredAvailable is replicas less maxUnavailable; the pods beyond the replicas are no part
	// of it).
	if app != "web" {
		return
	}
	// A pod released from web leaves its budget's selector unasked: for a moment the budget's count
	// still has it (its controller recounts on the change), as Kruise's admission reads it.
	if ch.asks.releasedWithin("web", releaseRecount, time.Now()) {
		return
	}
	if b, ok := ch.budgetOut(cur); ok && b > budgetMaxUnavailable {
		ch.violateOn(checkTakeOut, out, "%s %s took %s out of service with %d pods out of its PodUnavailableBudget (replicas asked lately: %s), above its maxUnavailable %d; live pods: %s; the budget's status just after: %s",
			w.Kind, w.Name, cur.Name, b, ch.replicas.describe("web", 30*time.Second), budgetMaxUnavailable, describeAll(ch.live("web")), ch.budgetStatus())
	}
}

// podGoes checks a pod's deletion (before is the pod as it was until then): the driver evicted or
// deleted it (an eviction of web's within its budget), deleted its workload with it, or its
// workload has more live pods than it asked for lately. A pod the driver released goes only when
// the driver deletes it.
func (ch *checker) podGoes(pod, before *corev1.Pod) {
	ch.checks.Add(1)
	if _, ok := ch.evicted.Load(pod.UID); ok {
		ch.evictedWithinBudget(before)
		return
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ch.asks.isDeletedOwner(ref.UID) {
		return
	}
	if pod.Labels[releasedLabel] != "" {
		ch.violateOn(checkDeletion, []string{pod.Name}, "pod %s (uid %s, %s), released from its workload, was deleted; no one asked",
			pod.Name, pod.UID, pod.Labels["app"])
		return
	}
	app := pod.Labels["app"]
	w, ok := workloadNamed(app)
	if !ok {
		return
	}
	live := 0
	for _, p := range ch.live(app) {
		if p.UID != pod.UID {
			live++
		}
	}
	live++ // pod itself was live until now
	if w.Scalable {
		asked, ok := ch.replicas.min(w.Name, 30*time.Second)
		if ok && int32(live) > asked {
			return
		}
		// A StatefulSet's scale-in removes the ordinals at and above its replicas, whether or not a
		// lower ordinal is missing for a moment (evicted, being made again).
		if ok && w.Kind == "StatefulSet" && ordinal.OrdinalOf(w.Name, pod.Name) >= int(asked) {
			return
		}
	}
	ch.violateOn(checkDeletion, []string{pod.Name}, "%s %s's pod %s (uid %s, phase %s, node %s) was deleted with %d live pods and no scale-in or eviction asking it (replicas lately: %s)",
		w.Kind, w.Name, pod.Name, pod.UID, pod.Status.Phase, pod.Spec.NodeName, live, ch.replicas.describe(w.Name, 30*time.Second))
}

func (ch *checker) claimGoes(c *corev1.PersistentVolumeClaim) {
	ch.checks.Add(1)
	ch.violate(checkClaims, "claim %s (uid %s) is deleted; the StatefulSet's retention policy keeps its claims", c.Name, c.UID)
}

// live are the pods of app that are not being deleted.
func (ch *checker) live(app string) []*corev1.Pod {
	pods, _ := ch.pods.Pods(ns).List(labels.SelectorFromSet(labels.Set{"app": app}))
	out := pods[:0]
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func workloadNamed(name string) (workload, bool) {
	for _, w := range world {
		if w.Name == name {
			return w, true
		}
	}
	return workload{}, false
}

func gate(pod *corev1.Pod) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == appspub.InPlaceUpdateReady {
			return c.Status
		}
	}
	return ""
}

// available: Ready, and not held out by Kruise's in-place gate.
func available(pod *corev1.Pod) bool {
	if gate(pod) == corev1.ConditionFalse {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// describe is a pod as a violation shows it: revision, age, and its readiness conditions.
func describe(p *corev1.Pod) string {
	var conds []string
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady || c.Type == appspub.InPlaceUpdateReady || c.Type == "KruisePodReady" {
			conds = append(conds, fmt.Sprintf("%s=%s(%s %s)", c.Type, c.Status, c.Reason, c.LastTransitionTime.Format("15:04:05")))
		}
	}
	return fmt.Sprintf("%s [rev %s, created %s, rv %s, %s]", p.Name, p.Labels["controller-revision-hash"],
		p.CreationTimestamp.Format("15:04:05"), p.ResourceVersion, strings.Join(conds, " "))
}
