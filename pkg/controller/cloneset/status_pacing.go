package cloneset

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// significant reports whether next must be written without delay: the controller observed a new
// generation, the revisions or conditions changed (a condition whose lastUpdateTime alone moved,
// Progressing during a rollout, is progress), or the CloneSet settled (every replica there,
// ready and, as far as the partition allows, updated). Counts moving during a scale or a rollout
// (replicas included) are progress, written at the pace of podcontrol.StatusInterval.
func significant(cur, next *v1alpha1.CloneSetStatus, replicas int32) bool {
	if cur.ObservedGeneration != next.ObservedGeneration || cur.UpdateRevision != next.UpdateRevision ||
		cur.CurrentRevision != next.CurrentRevision ||
		ptr.Deref(cur.CollisionCount, 0) != ptr.Deref(next.CollisionCount, 0) || !sameConditions(cur.Conditions, next.Conditions) {
		return true
	}
	return next.Replicas == replicas && next.ReadyReplicas == replicas && next.AvailableReplicas == replicas &&
		next.UpdatedReplicas >= next.ExpectedUpdatedReplicas && next.UpdatedReadyReplicas >= next.ExpectedUpdatedReplicas
}

// sameConditions compares condition lists ignoring lastUpdateTime.
func sameConditions(a, b []v1alpha1.CloneSetCondition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.LastUpdateTime = y.LastUpdateTime
		if !equality.Semantic.DeepEqual(x, y) {
			return false
		}
	}
	return true
}
