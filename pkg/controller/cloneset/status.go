package cloneset

import (
	"time"

	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// ApplyErrors are the errors of one apply (FailedScale, FailedUpdate).
type ApplyErrors = workloadloop.Errors

// Condition reasons written by ComputeStatus.
const (
	// ReasonScaleError: creating or deleting pods failed; the message is the error.
	ReasonScaleError = "ScaleError"
	// ReasonScaleSucceeded: the last scale step after a failure succeeded.
	ReasonScaleSucceeded = "ScaleSucceeded"
	// ReasonUpdateError: updating pods failed; the message is the error.
	ReasonUpdateError = "UpdateError"
	// ReasonUpdateSucceeded: the last update step after a failure succeeded.
	ReasonUpdateSucceeded = "UpdateSucceeded"
)

// ComputeStatus is the status of the CloneSet described by snap at now, after an apply step that
// ended with errs. It is pure: it neither modifies its inputs nor shares memory with them.
//
//   - Counters are over active pods (not terminating), the planner's view of "the pods". Ready is
//     the pod's Ready condition; available is PodFacts.Available (ready for minReadySeconds and
//     not in an in-place update); updated means at the update revision, and an updated pod whose
//     in-place update has not completed is neither updated-ready nor updated-available.
//   - expectedUpdatedReplicas is replicas − partition resolved as the planner resolves it.
//   - currentRevision becomes the update revision once all pods are at it: every active pod is
//     updated and there are at least spec.replicas of them. Until then the current revision stays,
//     so pods created to make up a partition keep it. Readiness is not required.
//   - collisionCount and conditions of other types are carried over from old; FailedScale and
//     FailedUpdate follow errs (see computeConditions); Progressing follows the rollout when
//     progressDeadlineSeconds is set (see progressCondition).
func ComputeStatus(snap *Snapshot, now time.Time, old v1alpha1.CloneSetStatus, generation int64, errs ApplyErrors) v1alpha1.CloneSetStatus {
	b := ComputeBounds(&snap.Spec)
	st := computeCounters(snap, now)
	st.ObservedGeneration = generation
	st.ExpectedUpdatedReplicas = int32(b.ExpectedUpdated)
	st.UpdateRevision = snap.UpdateRevision
	st.CurrentRevision = computeCurrentRevision(snap, st, b.Replicas)
	if old.CollisionCount != nil {
		c := *old.CollisionCount
		st.CollisionCount = &c
	}
	st.LabelSelector = computeLabelSelector(snap.Spec.Selector)
	st.Conditions = computeConditions(old.Conditions, errs, now)
	st.Conditions = setProgressCondition(st.Conditions, progressCondition(&snap.Spec, &st, &old, now))
	return st
}

// computeCounters fills the replica counters.
func computeCounters(snap *Snapshot, now time.Time) v1alpha1.CloneSetStatus {
	minReady := time.Duration(snap.Spec.MinReadySeconds) * time.Second
	var st v1alpha1.CloneSetStatus
	for i := range snap.Pods {
		p := &snap.Pods[i]
		if p.Terminating {
			continue
		}
		updated := p.Revision == snap.UpdateRevision
		available := p.Available(now, minReady)
		st.Replicas++
		if p.Ready {
			st.ReadyReplicas++
		}
		if available {
			st.AvailableReplicas++
		}
		if !updated {
			continue
		}
		st.UpdatedReplicas++
		if p.Ready && !p.InPlaceUpdating {
			st.UpdatedReadyReplicas++
		}
		if available {
			st.UpdatedAvailableReplicas++
		}
	}
	return st
}

// computeCurrentRevision moves the current revision to the update revision once every active pod is
// at it and there are exactly spec.replicas of them (OpenKruise's rule: not while scaling in); an
// empty current revision starts at the update revision.
func computeCurrentRevision(snap *Snapshot, st v1alpha1.CloneSetStatus, replicas int) string {
	if snap.CurrentRevision == "" {
		return snap.UpdateRevision
	}
	if st.UpdatedReplicas == st.Replicas && int(st.Replicas) == replicas {
		return snap.UpdateRevision
	}
	return snap.CurrentRevision
}

// computeLabelSelector is spec.selector in the string form the scale subresource serves (kubectl
// scale, HPA); empty when there is no selector.
func computeLabelSelector(sel *metav1.LabelSelector) string {
	if sel == nil {
		return ""
	}
	return metav1.FormatLabelSelector(sel)
}

// computeConditions returns a copy of old with FailedScale and FailedUpdate set from errs. A
// condition is added (True) on the first error and afterwards kept: it turns False when its step
// succeeds. LastTransitionTime changes only when the status changes, LastUpdateTime only when the
// status, reason or message changes, so a repeated outcome leaves the list unchanged. Other
// conditions and the order of the list are kept.
func computeConditions(old []v1alpha1.CloneSetCondition, errs ApplyErrors, now time.Time) []v1alpha1.CloneSetCondition {
	var out []v1alpha1.CloneSetCondition
	if len(old) > 0 {
		out = make([]v1alpha1.CloneSetCondition, len(old))
		copy(out, old)
	}
	out = setErrorCondition(out, v1alpha1.CloneSetConditionFailedScale, errs.Scale,
		ReasonScaleError, ReasonScaleSucceeded, now)
	out = setErrorCondition(out, v1alpha1.CloneSetConditionFailedUpdate, errs.Update,
		ReasonUpdateError, ReasonUpdateSucceeded, now)
	return out
}

// setErrorCondition sets the condition t from err: True with the error as message, or False when
// err is nil and the condition exists. A missing condition is not added for a nil error.
func setErrorCondition(conds []v1alpha1.CloneSetCondition, t v1alpha1.CloneSetConditionType, err error,
	failReason, okReason string, now time.Time) []v1alpha1.CloneSetCondition {
	want := v1alpha1.CloneSetCondition{Type: t, Status: corev1.ConditionFalse, Reason: okReason}
	if err != nil {
		want.Status, want.Reason, want.Message = corev1.ConditionTrue, failReason, err.Error()
	}
	i := conditionIndex(conds, t)
	if i < 0 {
		if err == nil {
			return conds
		}
		want.LastTransitionTime, want.LastUpdateTime = metav1.NewTime(now), metav1.NewTime(now)
		return append(conds, want)
	}
	cur := conds[i]
	if cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message {
		return conds
	}
	want.LastTransitionTime, want.LastUpdateTime = cur.LastTransitionTime, metav1.NewTime(now)
	if cur.Status != want.Status {
		want.LastTransitionTime = metav1.NewTime(now)
	}
	conds[i] = want
	return conds
}

func conditionIndex(conds []v1alpha1.CloneSetCondition, t v1alpha1.CloneSetConditionType) int {
	for i := range conds {
		if conds[i].Type == t {
			return i
		}
	}
	return -1
}
