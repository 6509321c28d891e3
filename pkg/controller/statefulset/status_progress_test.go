package statefulset

import (
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestProgressConditionTimesOutAStuckRollout(t *testing.T) {
	set := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ProgressDeadlineAnnotation: "60"}},
		Spec: spec(3, appsv1.OrderedReadyPodManagement)}
	rolling := v1beta1.StatefulSetStatus{Replicas: 3, UpdatedReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}
	c := progressCondition(set, &rolling, &v1beta1.StatefulSetStatus{}, t0)
	if c.Status != corev1.ConditionTrue || c.Reason != ReasonProgressUpdated {
		t.Fatalf("started: %+v", c)
	}
	old := v1beta1.StatefulSetStatus{Conditions: []v1beta1.StatefulSetCondition{*c}}
	if c := progressCondition(set, &rolling, &old, t0.Add(59*time.Second)); c.Reason != ReasonProgressUpdated {
		t.Errorf("before the deadline: %+v", c)
	}
	if at := ProgressDeadlineAt(set, &old); !at.Equal(t0.Add(60 * time.Second)) {
		t.Errorf("deadline at %v", at)
	}
	late := progressCondition(set, &rolling, &old, t0.Add(61*time.Second))
	if late.Status != corev1.ConditionFalse || late.Reason != ReasonProgressDeadlineExceeded {
		t.Fatalf("after the deadline: %+v", late)
	}
	done := v1beta1.StatefulSetStatus{Replicas: 3, UpdatedReplicas: 3, UpdatedAvailableReplicas: 3, CurrentRevision: "b", UpdateRevision: "b"}
	old.Conditions = []v1beta1.StatefulSetCondition{*late}
	if c := progressCondition(set, &done, &old, t0.Add(90*time.Second)); c.Status != corev1.ConditionTrue || c.Reason != ReasonProgressAvailable {
		t.Errorf("rolled out: %+v", c)
	}
	set.Spec.UpdateStrategy.RollingUpdate.Partition = ptrTo(int32(2))
	partial := v1beta1.StatefulSetStatus{Replicas: 3, UpdatedReplicas: 1, UpdatedAvailableReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}
	if c := progressCondition(set, &partial, &old, t0); c.Reason != ReasonProgressPartitionAvailable {
		t.Errorf("partition reached: %+v", c)
	}
	set.Annotations[ProgressDeadlineAnnotation] = "0"
	if c := progressCondition(set, &rolling, &old, t0); c != nil {
		t.Errorf("deadline 0: %+v, want no condition", c)
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestFailureConditions(t *testing.T) {
	conds := failureConditions(nil, ApplyErrors{}, t0)
	if len(conds) != 0 {
		t.Fatalf("no failure: %+v", conds)
	}
	conds = failureConditions(conds, ApplyErrors{Scale: errors.New("quota exceeded")}, t0)
	if c := findCondition(conds, ConditionFailedCreatePod); c == nil || c.Status != corev1.ConditionTrue || c.Message != "quota exceeded" {
		t.Fatalf("create failed: %+v", conds)
	}
	conds = failureConditions(conds, ApplyErrors{}, t0.Add(time.Minute))
	if c := findCondition(conds, ConditionFailedCreatePod); c == nil || c.Status != corev1.ConditionFalse || !c.LastTransitionTime.Time.Equal(t0.Add(time.Minute)) {
		t.Fatalf("create succeeded again: %+v", conds)
	}
	if findCondition(conds, ConditionFailedUpdatePod) != nil {
		t.Errorf("FailedUpdatePod added without a failure: %+v", conds)
	}
}

func TestStatusPacingSignificance(t *testing.T) {
	mid := v1beta1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 10, ReadyReplicas: 8, AvailableReplicas: 8, UpdatedReplicas: 4,
		UpdatedReadyReplicas: 2, UpdateRevision: "r2", CurrentRevision: "r1"}
	moved := mid
	moved.UpdatedReplicas, moved.UpdatedReadyReplicas = 6, 4
	if significant(&mid, &moved, 10) {
		t.Error("counters moving mid-rollout: significant")
	}
	settled := mid
	settled.ReadyReplicas, settled.AvailableReplicas, settled.UpdatedReplicas, settled.UpdatedReadyReplicas = 10, 10, 10, 10
	newGen := mid
	newGen.ObservedGeneration = 3
	for name, next := range map[string]v1beta1.StatefulSetStatus{"settled": settled, "new generation": newGen} {
		if !significant(&mid, &next, 10) {
			t.Errorf("%s: not significant", name)
		}
	}
}
