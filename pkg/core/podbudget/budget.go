package podbudget

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// How long a recorded disruption or in-place update keeps a pod counted unavailable when the pods
// do not show it (OpenKruise's DeletionTimeout and UpdatedDelayCheckTime).
const (
	DeletionTimeout = 20 * time.Second
	UpdateTimeout   = 10 * time.Second
)

// MaxRecorded bounds disruptedPods plus unavailablePods: beyond it nothing more is admitted until
// the controller has caught up (OpenKruise's MaxUnavailablePodSize).
const MaxRecorded = 2000

// Ready reports whether pod is Running and Ready and carries no unavailable label.
func Ready(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || appspub.HasUnavailableLabel(pod.Labels) {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Consistent reports whether pod runs what its spec asks: no in-place update of its workload's
// containers (apps.kruise.io/inplace-update-state) nor of its sidecars
// (kruise.io/sidecarset-inplace-update-state) is still under way. Image IDs are compared only with
// those recorded before such an update: OpenKruise also compares a digest-pinned image with the
// image ID, which on containerd is the image's config digest, so that every such pod counts as
// unavailable there and the budget protects none of them (kruise#2570).
func Consistent(pod *corev1.Pod) bool {
	if !sidecarrules.SidecarsUpgraded(pod) {
		return false
	}
	switch p, _ := inplace.Inspect(pod); p {
	case inplace.Updating, inplace.Waiting, inplace.BatchDone:
		return false
	}
	return true
}

// Available reports whether pod counts towards a budget's available pods (before what the budget
// itself records).
func Available(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && Ready(pod) && Consistent(pod)
}

// Expected is the number of pods a budget counts on: its PubProtectTotalReplicasAnnotation when
// set, else workloads (its workloads' replicas).
func Expected(pub *policyv1alpha1.PodUnavailableBudget, workloads int32) int32 {
	if v := pub.Annotations[policyv1alpha1.PubProtectTotalReplicasAnnotation]; v != "" {
		n, _ := strconv.ParseInt(v, 10, 32)
		return int32(n)
	}
	return workloads
}

// DesiredAvailable is how many of expected pods must stay available: expected minus maxUnavailable
// (a percentage rounded up), or minAvailable (a percentage rounded up); never negative.
func DesiredAvailable(spec *policyv1alpha1.PodUnavailableBudgetSpec, expected int32) (int32, error) {
	switch {
	case spec.MaxUnavailable != nil:
		n, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, fmt.Errorf("spec.maxUnavailable: %w", err)
		}
		return max(0, expected-int32(n)), nil
	case spec.MinAvailable != nil:
		if spec.MinAvailable.Type == intstr.Int {
			return spec.MinAvailable.IntVal, nil
		}
		n, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, fmt.Errorf("spec.minAvailable: %w", err)
		}
		return int32(n), nil
	}
	return 0, nil
}

// Status computes a budget's status from its pods (the alive pods it guards), expected and desired
// at now: the recorded disruptions and updates of pods that still exist are kept until their
// timeout (when recheck is the earliest) — an update only until the pod is back (backSince) — the
// others dropped; available pods are those Available
// and not recorded.
func Status(pub *policyv1alpha1.PodUnavailableBudget, pods []*corev1.Pod, expected, desired int32, now time.Time) (st policyv1alpha1.PodUnavailableBudgetStatus, recheck time.Time) {
	st = policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: pub.Generation, DesiredAvailable: desired, TotalReplicas: expected,
		DisruptedPods: map[string]metav1.Time{}, UnavailablePods: map[string]metav1.Time{}}
	keep := func(into map[string]metav1.Time, name string, at metav1.Time, timeout time.Duration) {
		due := at.Add(timeout)
		if due.Before(now) {
			return
		}
		into[name] = at
		if recheck.IsZero() || due.Before(recheck) {
			recheck = due
		}
	}
	for _, pod := range pods {
		if at, ok := pub.Status.DisruptedPods[pod.Name]; ok {
			keep(st.DisruptedPods, pod.Name, at, DeletionTimeout)
		}
		if at, ok := pub.Status.UnavailablePods[pod.Name]; ok && !backSince(pod, at) {
			keep(st.UnavailablePods, pod.Name, at, UpdateTimeout)
		}
	}
	for _, pod := range pods {
		_, disrupted := st.DisruptedPods[pod.Name]
		_, unavailable := st.UnavailablePods[pod.Name]
		if !disrupted && !unavailable && Available(pod) {
			st.CurrentAvailable++
		}
	}
	st.UnavailableAllowed = max(0, st.CurrentAvailable-desired)
	return st, recheck
}

// backSince reports whether pod is available again and became Ready after at: the update recorded
// then has been carried out and the pod is back. OpenKruise keeps such a pod counted unavailable
// until UpdateTimeout has passed; Kruise returns it to the budget as soon as it is back, so a
// guarded rollout moves at the pace of the pods, not of the timeout.
func backSince(pod *corev1.Pod, at metav1.Time) bool {
	if !Available(pod) {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.After(at.Time)
		}
	}
	return false
}

// Guards reports whether pub guards operation (PubProtectOperationAnnotation).
func Guards(pub *policyv1alpha1.PodUnavailableBudget, op policyv1alpha1.PubOperation) bool {
	v := pub.Annotations[policyv1alpha1.PubProtectOperationAnnotation]
	if v == "" {
		return true
	}
	for _, o := range strings.Split(v, ",") {
		if o == string(op) {
			return true
		}
	}
	return false
}

// Decision is the answer to one operation on a pod.
type Decision struct {
	// Allowed says whether the operation may go through.
	Allowed bool
	// Record is true when the budget's status must record the pod (Status holds the new status):
	// the operation is allowed at the cost of one unit of the budget.
	Record bool
	// Reason explains a refusal.
	Reason string
}

// UncountedFor is how long a new budget whose controller has not counted its pods refuses their
// disruptions; past it (a budget its controller cannot count: its events say why), it decides from
// the status it has, as OpenKruise does.
const UncountedFor = time.Minute

// Admit decides whether op may disrupt pod under pub (nil: no budget guards it) at now, as
// OpenKruise's webhook decides: pods marked no-protect, budgets that need nothing available,
// operations the budget does not guard, pods it recorded already (for an update: unless back
// since, see backSince) and pods unavailable already pass for free — except the eviction of an
// unavailable pod while the budget is not met, refused as Kubernetes refuses it; any other pod
// takes one unit of unavailableAllowed, recorded in pub.Status (pub is modified only when the
// decision is Record). Beyond OpenKruise, a budget created less than UncountedFor ago whose
// controller has not counted its pods yet refuses: a disruption made right after the budget's
// create is not let through for want of a count.
func Admit(pub *policyv1alpha1.PodUnavailableBudget, pod *corev1.Pod, op policyv1alpha1.PubOperation, now time.Time) Decision {
	switch {
	case pub == nil,
		pod.Annotations[policyv1alpha1.PodPubNoProtectionAnnotation] == "true",
		!Guards(pub, op):
		return Decision{Allowed: true}
	case pub.Status.ObservedGeneration == 0 && now.Sub(pub.CreationTimestamp.Time) < UncountedFor:
		return Decision{Reason: fmt.Sprintf("PodUnavailableBudget %s has not counted its pods yet", pub.Name)}
	case pub.Status.DesiredAvailable == 0:
		return Decision{Allowed: true}
	}
	if _, ok := pub.Status.DisruptedPods[pod.Name]; ok {
		return Decision{Allowed: true}
	}
	if at, ok := pub.Status.UnavailablePods[pod.Name]; ok && !backSince(pod, at) {
		// Its recorded update is under way. A pod back since its record is another matter: that
		// update is carried out, and the controller's next count drops the record (Status), so a
		// new disruption of the pod riding on it would be counted nowhere.
		return Decision{Allowed: true}
	}
	if !Ready(pod) || !Consistent(pod) {
		// An unavailable pod costs the budget nothing. An eviction of one is refused while the
		// budget is not met, as Kubernetes' PodDisruptionBudget refuses it (IfHealthyBudget): when a
		// failure makes every pod NotReady, a drain must not take them all (kruise#1469).
		if op == policyv1alpha1.PubEvictOperation && pub.Status.CurrentAvailable < pub.Status.DesiredAvailable {
			return Decision{Reason: fmt.Sprintf("PodUnavailableBudget %s is not met (%d available, %d must be): "+
				"its pods are not evicted, even unavailable ones, until it is", pub.Name, pub.Status.CurrentAvailable, pub.Status.DesiredAvailable)}
		}
		return Decision{Allowed: true}
	}
	if pub.Status.UnavailableAllowed <= 0 {
		// The words after the counts are OpenKruise's, which scripts match.
		return Decision{Reason: fmt.Sprintf("PodUnavailableBudget %s allows no more unavailable pods (%d available, %d must stay available): pub unavailable allowed is negative",
			pub.Name, pub.Status.CurrentAvailable, pub.Status.DesiredAvailable)}
	}
	if len(pub.Status.DisruptedPods)+len(pub.Status.UnavailablePods) > MaxRecorded {
		return Decision{Reason: fmt.Sprintf("PodUnavailableBudget %s records too many unavailable pods not yet confirmed by its controller (too many unavailable not confirmed by PUB controller)", pub.Name)}
	}
	pub.Status.UnavailableAllowed--
	at := metav1.NewTime(now)
	if op == policyv1alpha1.PubUpdateOperation {
		if pub.Status.UnavailablePods == nil {
			pub.Status.UnavailablePods = map[string]metav1.Time{}
		}
		pub.Status.UnavailablePods[pod.Name] = at
	} else {
		if pub.Status.DisruptedPods == nil {
			pub.Status.DisruptedPods = map[string]metav1.Time{}
		}
		pub.Status.DisruptedPods[pod.Name] = at
	}
	return Decision{Allowed: true, Record: true}
}

// UpdateDisrupts reports whether an update of a pod from old to new can make it unavailable: its
// spec changes, or it gains an unavailable label.
func UpdateDisrupts(old, new *corev1.Pod) bool {
	if !equality.Semantic.DeepEqual(old.Spec, new.Spec) {
		return true
	}
	return !appspub.HasUnavailableLabel(old.Labels) && appspub.HasUnavailableLabel(new.Labels)
}

// PodSelector is the selector of the pods pub guards: its spec.selector, or, with a targetRef
// (which wins), the selector of that workload (target; nil when it does not exist, and then no pod
// is guarded).
func PodSelector(pub *policyv1alpha1.PodUnavailableBudget, target *metav1.LabelSelector) *metav1.LabelSelector {
	if pub.Spec.TargetReference != nil {
		return target
	}
	return pub.Spec.Selector
}
