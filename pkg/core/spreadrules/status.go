package spreadrules

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

// Timeouts of the admission records, OpenKruise's: a pod recorded in creatingPods that the
// controller has not seen after CreateTimeout was never created; one recorded in deletingPods that
// is still there after DeleteTimeout was not deleted.
const (
	CreateTimeout = 30 * time.Second
	DeleteTimeout = 15 * time.Second
)

// Member is what a subset's status reads of one of its pods.
type Member struct {
	// Name is the pod's name; Key is its creatingPods key (Key).
	Name, Key string
	// Active is Kubernetes' IsPodActive.
	Active bool
}

// SubsetInput is one subset as its status is computed.
type SubsetInput struct {
	Name        string
	MaxReplicas *intstr.IntOrString
	// WorkloadReplicas is what percentages refer to.
	WorkloadReplicas int32
	// Pods are the pods admitted into the subset (of one revision, or of all).
	Pods []Member
	// Old is the subset's previous status; nil when it had none.
	Old *appsv1alpha1.WorkloadSpreadSubsetStatus
}

// SubsetOutcome is a subset's new status and what its computation noticed.
type SubsetOutcome struct {
	Status appsv1alpha1.WorkloadSpreadSubsetStatus
	// CreateExpired are the creatingPods keys dropped after CreateTimeout without the pod showing
	// up; DeleteExpired the deletingPods names of pods still there after DeleteTimeout.
	CreateExpired, DeleteExpired []string
	// RecheckAt is when a record expires next (zero: none pending).
	RecheckAt time.Time
}

// ComputeSubsetStatus recomputes a subset's status from its pods, as OpenKruise's controller does:
// replicas counts the active pods; missingReplicas is the quota (-1 unlimited) less one per active
// pod and per creation still expected, plus one per deletion still expected, clamped to
// [0, quota] once. A pod seen leaves creatingPods; records past their timeout are dropped.
// Conditions are copied from Old. It errors on a malformed quota.
//
// Deliberately unlike OpenKruise, which clamps after each pod, the clamp comes last: a pod admitted
// into the replica of a pod whose deletion is recorded may be in the cache before that pod's
// deletion is, and counted pod by pod the subset then reads one replica short of full whenever
// the going pod is counted after the clamp at 0 — one pod too many placed there, for good.
func ComputeSubsetStatus(in SubsetInput, now time.Time) (SubsetOutcome, error) {
	quota, err := MaxReplicas(in.MaxReplicas, in.WorkloadReplicas)
	if err != nil {
		return SubsetOutcome{}, err
	}
	out := SubsetOutcome{Status: appsv1alpha1.WorkloadSpreadSubsetStatus{Name: in.Name, MissingReplicas: quota,
		CreatingPods: map[string]metav1.Time{}, DeletingPods: map[string]metav1.Time{}}}
	st := &out.Status
	missing := int64(quota) // before the clamp; unused when unlimited
	var creating, deleting map[string]metav1.Time
	if in.Old != nil {
		creating = maps.Clone(in.Old.CreatingPods)
		deleting = in.Old.DeletingPods
		for i := range in.Old.Conditions {
			st.Conditions = append(st.Conditions, *in.Old.Conditions[i].DeepCopy())
		}
	}
	for _, p := range in.Pods {
		delete(creating, p.Key)
		if !p.Active {
			continue
		}
		st.Replicas++
		missing--
		at, ok := deleting[p.Name]
		if !ok {
			continue
		}
		deadline := at.Add(DeleteTimeout)
		if deadline.Before(now) {
			out.DeleteExpired = append(out.DeleteExpired, p.Name)
			continue
		}
		st.DeletingPods[p.Name] = at
		missing++
		out.RecheckAt = subset.Earliest(out.RecheckAt, deadline)
	}
	for key, at := range creating {
		deadline := at.Add(CreateTimeout)
		if deadline.Before(now) {
			out.CreateExpired = append(out.CreateExpired, key)
			continue
		}
		st.CreatingPods[key] = at
		missing--
		out.RecheckAt = subset.Earliest(out.RecheckAt, deadline)
	}
	if quota != Unlimited {
		st.MissingReplicas = int32(min(max(missing, 0), int64(quota)))
	}
	return out, nil
}

// Empty tells whether a computed subset status holds nothing: no replicas and no pending record.
func Empty(st *appsv1alpha1.WorkloadSpreadSubsetStatus) bool {
	return st.Replicas == 0 && len(st.CreatingPods) == 0 && len(st.DeletingPods) == 0
}

// SchedulableCondition returns the Schedulable condition of a subset judged by v (pkg/core/subset's
// Assess): False while v marks it unschedulable, its transition time the mark's; True otherwise,
// keeping old's transition time when old was True already. As OpenKruise, reason and message are
// empty.
func SchedulableCondition(v subset.Verdict, old *appsv1alpha1.WorkloadSpreadSubsetCondition, now time.Time) appsv1alpha1.WorkloadSpreadSubsetCondition {
	if v.Unschedulable {
		return appsv1alpha1.WorkloadSpreadSubsetCondition{Type: appsv1alpha1.WorkloadSpreadSubsetSchedulable,
			Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(v.MarkedSince)}
	}
	c := appsv1alpha1.WorkloadSpreadSubsetCondition{Type: appsv1alpha1.WorkloadSpreadSubsetSchedulable,
		Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)}
	if old != nil && old.Status == corev1.ConditionTrue {
		c.LastTransitionTime = old.LastTransitionTime
	}
	return c
}

// SetCondition returns conditions with c in place of the condition of its type (appended when
// absent); c == nil removes it. conditions is not modified.
func SetCondition(conditions []appsv1alpha1.WorkloadSpreadSubsetCondition, typ appsv1alpha1.WorkloadSpreadSubsetConditionType,
	c *appsv1alpha1.WorkloadSpreadSubsetCondition) []appsv1alpha1.WorkloadSpreadSubsetCondition {
	var out []appsv1alpha1.WorkloadSpreadSubsetCondition
	for _, x := range conditions {
		if x.Type != typ {
			out = append(out, x)
		}
	}
	if c != nil {
		out = append(out, *c)
	}
	return out
}

// Condition returns the condition of type typ, or nil.
func Condition(st *appsv1alpha1.WorkloadSpreadSubsetStatus, typ appsv1alpha1.WorkloadSpreadSubsetConditionType) *appsv1alpha1.WorkloadSpreadSubsetCondition {
	if st == nil {
		return nil
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}
