package statefulset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

// ComputeStatus is the set's status over the snapshot (pure). Counters, as OpenKruise and upstream
// count them: replicas are the pods created (terminating ones included, finished ones not);
// ready pods run and are Ready; available pods are also ready for minReadySeconds and in no
// in-place update or lifecycle action; current and updated pods are those not terminating at the
// current and the update revision. The current revision becomes the update revision once every
// replica is updated. claims are the set's PVCs by name, for status.volumeClaims.
func ComputeStatus(s *Snapshot, now time.Time, prev v1beta1.StatefulSetStatus, generation int64, selector string,
	claims map[string]*corev1.PersistentVolumeClaim) v1beta1.StatefulSetStatus {
	st := v1beta1.StatefulSetStatus{ObservedGeneration: generation, LabelSelector: selector, Conditions: prev.Conditions,
		CurrentRevision: s.CurrentRevision, UpdateRevision: s.UpdateRevision, CollisionCount: prev.CollisionCount}
	minReady := time.Duration(0)
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		minReady = time.Duration(ptr.Deref(ru.MinReadySeconds, 0)) * time.Second
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.finished() {
			continue
		}
		st.Replicas++
		ready := p.running() && p.Ready
		available := ready && p.Available(now, minReady)
		if ready {
			st.ReadyReplicas++
		}
		if available {
			st.AvailableReplicas++
		}
		if p.Terminating {
			continue
		}
		if p.Revision == s.CurrentRevision {
			st.CurrentReplicas++
		}
		if p.Revision == s.UpdateRevision {
			st.UpdatedReplicas++
			if ready {
				st.UpdatedReadyReplicas++
			}
			if available {
				st.UpdatedAvailableReplicas++
			}
		}
	}
	want := ptr.Deref(s.Spec.Replicas, 1)
	if st.UpdatedReplicas >= want && st.Replicas == want {
		st.CurrentRevision, st.CurrentReplicas = s.UpdateRevision, st.UpdatedReplicas
	}
	st.VolumeClaims = claimStatus(s, claims)
	return st
}

// claimStatus counts, per claim template, the replicas whose claim exists and requests at least
// the template's storage (compatible), and of those the ones whose claim's capacity has it
// (compatible and ready).
func claimStatus(s *Snapshot, claims map[string]*corev1.PersistentVolumeClaim) []v1beta1.StatefulSetVolumeClaimStatus {
	var out []v1beta1.StatefulSetVolumeClaimStatus
	for _, t := range s.Spec.VolumeClaimTemplates {
		want := t.Spec.Resources.Requests[corev1.ResourceStorage]
		vc := v1beta1.StatefulSetVolumeClaimStatus{VolumeClaimName: t.Name}
		for i := range s.Pods {
			pvc := claims[ordinal.ClaimName(t.Name, s.Name, s.Pods[i].Ordinal)]
			if s.Pods[i].finished() || pvc == nil {
				continue
			}
			req := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
			if req.Cmp(want) < 0 {
				continue
			}
			vc.CompatibleReplicas++
			if c, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok && c.Cmp(want) >= 0 {
				vc.CompatibleReadyReplicas++
			}
		}
		out = append(out, vc)
	}
	return out
}

// The conditions OpenKruise v1.9.0 defines for a set whose pod writes fail.
const (
	ConditionFailedCreatePod appsv1.StatefulSetConditionType = "FailedCreatePod"
	ConditionFailedUpdatePod appsv1.StatefulSetConditionType = "FailedUpdatePod"
)

// failureConditions sets FailedCreatePod from errs.Scale and FailedUpdatePod from errs.Update: True
// with the error as message on a failure, False once the step succeeds again (a condition never
// set is not added for a success). Its lastTransitionTime moves only with its status.
func failureConditions(conds []v1beta1.StatefulSetCondition, errs ApplyErrors, now time.Time) []v1beta1.StatefulSetCondition {
	for _, f := range []struct {
		t   appsv1.StatefulSetConditionType
		err error
	}{{ConditionFailedCreatePod, errs.Scale}, {ConditionFailedUpdatePod, errs.Update}} {
		cur := findCondition(conds, f.t)
		want := v1beta1.StatefulSetCondition{Type: f.t, Status: corev1.ConditionFalse}
		if f.err != nil {
			want.Status, want.Message = corev1.ConditionTrue, f.err.Error()
		}
		switch {
		case cur == nil && f.err == nil:
			continue
		case cur != nil && cur.Status == want.Status && cur.Message == want.Message:
			continue
		case cur != nil && cur.Status == want.Status:
			want.LastTransitionTime = cur.LastTransitionTime
		default:
			want.LastTransitionTime = metav1.NewTime(now)
		}
		conds = setCondition(conds, f.t, &want)
	}
	return conds
}

// significant reports whether next must be written without delay (podcontrol.StatusInterval): a
// new generation observed, revisions, collision count or conditions changed, or the set settled
// (every replica there, ready, available and, as far as the partition allows, updated). Counts
// moving during a scale or a rollout are written at the pacer's pace.
func significant(cur, next *v1beta1.StatefulSetStatus, replicas int32) bool {
	if cur.ObservedGeneration != next.ObservedGeneration || cur.UpdateRevision != next.UpdateRevision ||
		cur.CurrentRevision != next.CurrentRevision || ptr.Deref(cur.CollisionCount, 0) != ptr.Deref(next.CollisionCount, 0) ||
		!equality.Semantic.DeepEqual(cur.Conditions, next.Conditions) || !equality.Semantic.DeepEqual(cur.VolumeClaims, next.VolumeClaims) {
		return true
	}
	return next.Replicas == replicas && next.ReadyReplicas == replicas && next.AvailableReplicas == replicas &&
		next.UpdatedReadyReplicas == next.UpdatedReplicas
}
