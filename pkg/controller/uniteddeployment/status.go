package uniteddeployment

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

// The UnitedDeployment's conditions, as OpenKruise names them.
const (
	// Updated is True when the current revision is the update revision.
	Updated appsv1alpha1.UnitedDeploymentConditionType = "UnitedDeploymentUpdated"
	// SubsetProvisioned is True once subset workloads were created or deleted without error.
	SubsetProvisioned appsv1alpha1.UnitedDeploymentConditionType = "SubsetProvisioned"
	// SubsetUpdated is True when the last writes of subset workloads succeeded.
	SubsetUpdated appsv1alpha1.UnitedDeploymentConditionType = "SubsetUpdated"
	// SubsetSchedulable, on a subset status, is False while the Adaptive strategy keeps new
	// replicas away from the subset.
	SubsetSchedulable appsv1alpha1.UnitedDeploymentSubsetConditionType = "Schedulable"
)

// status computes the status of s.UD after a successful reconcile: the subset workloads' counts,
// the allocation and partitions, the revisions and the conditions. provisioned says the reconcile
// creates or deletes subset workloads.
func status(s Snapshot, by map[string]workload, replicas, partitions map[string]int32,
	sched map[string]subset.Verdict, reserved map[string]reservation, provisioned bool) appsv1alpha1.UnitedDeploymentStatus {
	ud := s.UD
	now := metav1.NewTime(s.Now)
	st := appsv1alpha1.UnitedDeploymentStatus{
		ObservedGeneration: ud.Generation,
		CollisionCount:     s.CollisionCount,
		SubsetReplicas:     replicas,
		Conditions:         append([]appsv1alpha1.UnitedDeploymentCondition(nil), ud.Status.Conditions...),
		UpdateStatus:       &appsv1alpha1.UnitedDeploymentUpdateStatus{UpdatedRevision: s.Revision, CurrentPartitions: partitions},
	}
	if sel, err := metav1.LabelSelectorAsSelector(ud.Spec.Selector); err == nil {
		st.LabelSelector = sel.String()
	}
	if reservingStrategy(ud) {
		st.LabelSelector += "," + ReservedLabel + "=false"
	}
	for i := range ud.Spec.Topology.Subsets {
		name := ud.Spec.Topology.Subsets[i].Name
		sub := appsv1alpha1.UnitedDeploymentSubsetStatus{Name: name, Partition: partitions[name]}
		for _, old := range ud.Status.SubsetStatuses {
			if old.Name == name {
				sub.Conditions = append(sub.Conditions, old.Conditions...)
			}
		}
		if w, ok := by[name]; ok {
			sub.Replicas, sub.ReadyReplicas = w.StatusReplicas, w.StatusReady
			st.Replicas += w.StatusReplicas
			st.ReadyReplicas += w.StatusReady
			for _, pod := range s.Pods[name] {
				if pod.DeletionTimestamp != nil || pod.Labels[RevisionLabel] != s.Revision {
					continue
				}
				st.UpdatedReplicas++
				if healthy(pod) {
					st.UpdatedReadyReplicas++
				}
			}
		}
		if v, ok := sched[name]; ok {
			sub.Conditions = schedulable(sub.Conditions, v, now)
		}
		if r, ok := reserved[name]; ok {
			sub.ReservedPods = r.Reserved
			st.ReservedPods += r.Reserved
			st.Replicas -= r.Reserved
			sub.Conditions = reservedCondition(sub.Conditions, r, now)
		}
		st.SubsetStatuses = append(st.SubsetStatuses, sub)
	}

	st.CurrentRevision = s.Current
	if st.CurrentRevision != s.Revision && st.UpdatedReadyReplicas >= st.Replicas {
		st.CurrentRevision = s.Revision
	}
	updated := appsv1alpha1.UnitedDeploymentCondition{Type: Updated, Status: corev1.ConditionTrue,
		Reason: "UnitedDeploymentRevisionUpdated", Message: fmt.Sprintf("updated to revision %s", s.Revision)}
	if s.Current != s.Revision {
		updated = appsv1alpha1.UnitedDeploymentCondition{Type: Updated, Status: corev1.ConditionFalse,
			Reason: "UnitedDeploymentRevisionUpdating", Message: fmt.Sprintf("updating to revision %s", s.Revision)}
	}
	st.Conditions = setCondition(st.Conditions, updated, now)
	if provisioned {
		st.Conditions = setCondition(st.Conditions, appsv1alpha1.UnitedDeploymentCondition{Type: SubsetProvisioned, Status: corev1.ConditionTrue}, now)
	}
	st.Conditions = setCondition(st.Conditions, appsv1alpha1.UnitedDeploymentCondition{Type: SubsetUpdated, Status: corev1.ConditionTrue}, now)
	return st
}

// failed returns st with condition typ False for err (reason Error), as OpenKruise reports a
// failed provision or update.
func failed(st appsv1alpha1.UnitedDeploymentStatus, typ appsv1alpha1.UnitedDeploymentConditionType, err error, at time.Time) appsv1alpha1.UnitedDeploymentStatus {
	st.Conditions = setCondition(st.Conditions, appsv1alpha1.UnitedDeploymentCondition{Type: typ, Status: corev1.ConditionFalse,
		Reason: "Error", Message: err.Error()}, metav1.NewTime(at))
	return st
}

// setCondition sets c in conds: a condition of the same type, status and reason stays as it is;
// otherwise c replaces it, transitioning at now. conds is not modified.
func setCondition(conds []appsv1alpha1.UnitedDeploymentCondition, c appsv1alpha1.UnitedDeploymentCondition, now metav1.Time) []appsv1alpha1.UnitedDeploymentCondition {
	out := make([]appsv1alpha1.UnitedDeploymentCondition, 0, len(conds)+1)
	for _, old := range conds {
		if old.Type != c.Type {
			out = append(out, old)
			continue
		}
		if old.Status == c.Status && old.Reason == c.Reason {
			return conds
		}
	}
	c.LastTransitionTime = now
	return append(out, c)
}

// schedulable sets a subset's Schedulable condition from its Adaptive verdict: False from the
// time the subset was marked (the verdict's MarkedSince, which the next Assess reads back), True
// again (reason "recover") once the mark expired; never added to a subset never marked.
func schedulable(conds []appsv1alpha1.UnitedDeploymentSubsetCondition, v subset.Verdict, now metav1.Time) []appsv1alpha1.UnitedDeploymentSubsetCondition {
	want := appsv1alpha1.UnitedDeploymentSubsetCondition{Type: SubsetSchedulable, Status: corev1.ConditionTrue, Reason: "recover",
		Message: "no pod of the subset is stuck unscheduled", LastTransitionTime: now}
	if v.Unschedulable {
		want = appsv1alpha1.UnitedDeploymentSubsetCondition{Type: SubsetSchedulable, Status: corev1.ConditionFalse, Reason: "reschedule",
			Message:            fmt.Sprintf("%d pod(s) stuck unscheduled; no new replicas until %s", len(v.Stuck), v.Until.UTC().Format(time.RFC3339)),
			LastTransitionTime: metav1.NewTime(v.MarkedSince)}
	}
	out := make([]appsv1alpha1.UnitedDeploymentSubsetCondition, 0, len(conds)+1)
	for _, old := range conds {
		if old.Type != SubsetSchedulable {
			out = append(out, old)
			continue
		}
		if old.Status == corev1.ConditionTrue && want.Status == corev1.ConditionTrue {
			return conds
		}
	}
	if !v.Unschedulable && len(out) == len(conds) {
		return conds // never marked: no condition to add
	}
	return append(out, want)
}

// reservingStrategy tells whether ud runs the Adaptive strategy with reserveUnschedulablePods.
func reservingStrategy(ud *appsv1alpha1.UnitedDeployment) bool {
	ss := ud.Spec.Topology.ScheduleStrategy
	return ss.Type == appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType && ss.Adaptive != nil && ss.Adaptive.ReserveUnschedulablePods
}

// reservedCondition sets a subset's Schedulable condition from its reservation: False while it
// has reserved pods, True otherwise (reason "reschedule" both, as OpenKruise writes them).
func reservedCondition(conds []appsv1alpha1.UnitedDeploymentSubsetCondition, r reservation, now metav1.Time) []appsv1alpha1.UnitedDeploymentSubsetCondition {
	want := appsv1alpha1.UnitedDeploymentSubsetCondition{Type: SubsetSchedulable, Status: corev1.ConditionTrue, Reason: "reschedule",
		Message: "no reserved pods", LastTransitionTime: now}
	if r.Reserved > 0 {
		want.Status, want.Message = corev1.ConditionFalse, "reserved pods found"
	}
	out := make([]appsv1alpha1.UnitedDeploymentSubsetCondition, 0, len(conds)+1)
	for _, old := range conds {
		if old.Type != SubsetSchedulable {
			out = append(out, old)
			continue
		}
		if old.Status == want.Status && old.Reason == want.Reason {
			return conds
		}
	}
	return append(out, want)
}
