package daemonset

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

// ComputeStatus is the daemon set's status over the snapshot (pure), counted as the DaemonSet
// controller counts: per node that should run a pod, the node's pod (its oldest live one, else its
// oldest) is scheduled, ready, available (ready for minReadySeconds, in no in-place update or
// lifecycle action) and updated (at the update revision); nodes that should not run one but have
// one are misscheduled. updateRevision is the update revision's hash.
func ComputeStatus(s *Snapshot, now time.Time, prev v1beta1.DaemonSetStatus, generation int64) v1beta1.DaemonSetStatus {
	st := v1beta1.DaemonSetStatus{ObservedGeneration: generation, Conditions: prev.Conditions, CollisionCount: prev.CollisionCount,
		UpdateRevision: revision.ShortHash(s.UpdateRevision)}
	minReady := time.Duration(s.Spec.MinReadySeconds) * time.Second
	for i := range s.Nodes {
		n := &s.Nodes[i]
		pod := representative(n.Pods)
		if !n.Verdict.Run {
			if pod != nil {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if pod == nil {
			continue
		}
		st.CurrentNumberScheduled++
		if pod.Ready {
			st.NumberReady++
		}
		if pod.Available(now, minReady) {
			st.NumberAvailable++
		}
		if pod.Revision == s.UpdateRevision {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = max(st.DesiredNumberScheduled-st.NumberAvailable, 0)
	return st
}

// representative is the pod a node's counters read: its oldest live pod, else its oldest, else nil.
func representative(pods []PodFacts) *PodFacts {
	for i := range pods {
		if pods[i].live() {
			return &pods[i]
		}
	}
	if len(pods) > 0 {
		return &pods[0]
	}
	return nil
}

// significant reports whether a status change is written at once rather than paced: anything but
// the counters, or counters that say the rollout is done.
func significant(cur, next *v1beta1.DaemonSetStatus) bool {
	if cur.ObservedGeneration != next.ObservedGeneration || cur.UpdateRevision != next.UpdateRevision ||
		ptr.Deref(cur.CollisionCount, 0) != ptr.Deref(next.CollisionCount, 0) || cur.DesiredNumberScheduled != next.DesiredNumberScheduled ||
		!equality.Semantic.DeepEqual(cur.Conditions, next.Conditions) {
		return true
	}
	d := next.DesiredNumberScheduled
	return next.UpdatedNumberScheduled == d && next.NumberAvailable == d && next.CurrentNumberScheduled == d
}
