package statefulset

import (
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// A stuck rollout is reported (a Kruise extension; OpenKruise's Advanced StatefulSet has no
// progress deadline): the Progressing condition says where the rollout stands, and turns False
// with reason ProgressDeadlineExceeded, with a Warning event, when a rollout under way has not
// finished ProgressDeadlineAnnotation seconds (default 600) after it started.

// ProgressDeadlineAnnotation sets a set's progress deadline in seconds; "0" or a negative value
// turns the Progressing condition off.
const ProgressDeadlineAnnotation = "apps.kruise.io/progress-deadline-seconds"

// DefaultProgressDeadline is the progress deadline of a set without the annotation.
const DefaultProgressDeadline = 600 * time.Second

// ConditionProgressing is the condition type.
const ConditionProgressing appsv1.StatefulSetConditionType = "Progressing"

// Reasons of the Progressing condition.
const (
	ReasonProgressUpdated            = "StatefulSetUpdated"
	ReasonProgressAvailable          = "StatefulSetAvailable"
	ReasonProgressPaused             = "StatefulSetPaused"
	ReasonProgressPartitionAvailable = "ProgressPartitionAvailable"
	ReasonProgressDeadlineExceeded   = "ProgressDeadlineExceeded"
)

// progressDeadline is the set's deadline; zero when it has none.
func progressDeadline(annotations map[string]string) time.Duration {
	v, ok := annotations[ProgressDeadlineAnnotation]
	if !ok {
		return DefaultProgressDeadline
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return DefaultProgressDeadline
	}
	return max(time.Duration(n)*time.Second, 0)
}

// expectedUpdated is how many replicas the rolling update moves to the update revision.
func expectedUpdated(spec *v1beta1.StatefulSetSpec) int32 {
	replicas := ptr.Deref(spec.Replicas, 1)
	if ru := spec.UpdateStrategy.RollingUpdate; ru != nil && spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		return max(replicas-ptr.Deref(ru.Partition, 0), 0)
	}
	return replicas
}

// progressCondition is the Progressing condition of a set whose new status is st, given the
// stored status old (nil: no deadline). The state is the first that holds of: Available (every
// replica at the update revision and available), Paused (rollingUpdate.paused, or OnDelete, which
// waits for the user), PartitionAvailable (a partition holds pods back and every pod it lets
// update is updated and available), DeadlineExceeded (False; the stored condition says so, or it
// is Updated since longer than the deadline), Updated. Its lastTransitionTime is when it took its
// reason: the deadline runs from the start of the rollout, paused time not counted.
func progressCondition(set *v1beta1.StatefulSet, st, old *v1beta1.StatefulSetStatus, now time.Time) *v1beta1.StatefulSetCondition {
	deadline := progressDeadline(set.Annotations)
	if deadline == 0 {
		return nil
	}
	spec := &set.Spec
	stored := findCondition(old.Conditions, ConditionProgressing)
	replicas := ptr.Deref(spec.Replicas, 1)
	ru := spec.UpdateStrategy.RollingUpdate
	status, reason, msg := corev1.ConditionTrue, ReasonProgressUpdated, "StatefulSet is progressing"
	switch {
	case st.CurrentRevision == st.UpdateRevision && st.Replicas == replicas && st.UpdatedReplicas == replicas && st.UpdatedAvailableReplicas == replicas:
		reason, msg = ReasonProgressAvailable, "StatefulSet is available"
	case spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType || (ru != nil && ru.Paused):
		reason, msg = ReasonProgressPaused, "StatefulSet is paused (rollingUpdate.paused, or OnDelete: pods update when deleted)"
	case expectedUpdated(spec) < replicas && expectedUpdated(spec) <= st.UpdatedAvailableReplicas:
		reason, msg = ReasonProgressPartitionAvailable, "StatefulSet has been paused due to partition ready"
	case stored != nil && (stored.Reason == ReasonProgressDeadlineExceeded ||
		(stored.Reason == ReasonProgressUpdated && stored.LastTransitionTime.Add(deadline).Before(now))):
		status, reason = corev1.ConditionFalse, ReasonProgressDeadlineExceeded
		msg = fmt.Sprintf("StatefulSet revision %s has timed out progressing", st.UpdateRevision)
	}
	if stored != nil && stored.Status == status && stored.Reason == reason {
		return stored
	}
	return &v1beta1.StatefulSetCondition{Type: ConditionProgressing, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(now)}
}

// ProgressDeadlineAt is when the Progressing condition of status turns False if the rollout has
// not become available, paused or partition-available by then; zero when it cannot.
func ProgressDeadlineAt(set *v1beta1.StatefulSet, status *v1beta1.StatefulSetStatus) time.Time {
	c := findCondition(status.Conditions, ConditionProgressing)
	deadline := progressDeadline(set.Annotations)
	if c == nil || deadline == 0 || c.Reason != ReasonProgressUpdated {
		return time.Time{}
	}
	return c.LastTransitionTime.Add(deadline)
}

func findCondition(conds []v1beta1.StatefulSetCondition, t appsv1.StatefulSetConditionType) *v1beta1.StatefulSetCondition {
	for i := range conds {
		if conds[i].Type == t {
			c := conds[i]
			return &c
		}
	}
	return nil
}

// setCondition puts c in place of conds' condition of its type (nil removes it), keeping the
// others in their order.
func setCondition(conds []v1beta1.StatefulSetCondition, t appsv1.StatefulSetConditionType, c *v1beta1.StatefulSetCondition) []v1beta1.StatefulSetCondition {
	out := make([]v1beta1.StatefulSetCondition, 0, len(conds)+1)
	done := false
	for _, x := range conds {
		switch {
		case x.Type != t:
			out = append(out, x)
		case c != nil && !done:
			out, done = append(out, *c), true
		}
	}
	if c != nil && !done {
		out = append(out, *c)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
