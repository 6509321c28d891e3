package statefulset

import (
	"context"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
)

// A spec the controller cannot run -- beyond pkg/core/ordinal's bounds (replicas, reserveOrdinals),
// or unreadable (selector, reserveOrdinals entries) -- reaches the API server only while the
// validating webhook is off or bypassed (the scale subresource). The controller then reads no pod,
// plans nothing and writes nothing but the status: condition InvalidSpec True with the reason and
// a message naming the field and the bound, observedGeneration, and a Warning event when the
// condition changes. The reconcile ends with a terminal error: it is not retried until the set
// changes. Once the spec is runnable again the condition turns False.

// ConditionInvalidSpec is the condition of a set whose spec the controller refuses to run (a Kruise
// addition; the status field is OpenKruise's).
const ConditionInvalidSpec appsv1.StatefulSetConditionType = "InvalidSpec"

// Reasons of the InvalidSpec condition (and of its Warning event).
const (
	// ReasonSpecOutOfBounds: a value is beyond a bound of pkg/core/ordinal (ordinal.BoundError).
	ReasonSpecOutOfBounds = "SpecOutOfBounds"
	// ReasonSpecUnreadable: the selector or a reserveOrdinals entry does not read.
	ReasonSpecUnreadable = "SpecUnreadable"
	// ReasonSpecAccepted: the spec is run again (status False).
	ReasonSpecAccepted = "SpecAccepted"
)

// refusal is why the controller does not run a set's spec.
type refusal struct {
	reason string
	err    error
}

func (e *refusal) Error() string {
	return e.err.Error() + ": no pod is created, updated or deleted until the spec is changed"
}
func (e *refusal) Unwrap() error { return e.err }

// refuse wraps a spec error as a refusal, with its reason.
func refuse(err error) *refusal {
	var bound *ordinal.BoundError
	if errors.As(err, &bound) {
		return &refusal{reason: ReasonSpecOutOfBounds, err: err}
	}
	return &refusal{reason: ReasonSpecUnreadable, err: err}
}

// invalidSpecCondition sets InvalidSpec in conds: True with ref's reason and message, or (ref
// nil) False once it was True; a set never refused gets no condition. lastTransitionTime moves
// only with the status.
func invalidSpecCondition(conds []v1beta1.StatefulSetCondition, ref *refusal, now time.Time) []v1beta1.StatefulSetCondition {
	cur := findCondition(conds, ConditionInvalidSpec)
	want := v1beta1.StatefulSetCondition{Type: ConditionInvalidSpec, Status: corev1.ConditionFalse, Reason: ReasonSpecAccepted,
		Message: "the spec is within the controller's bounds"}
	if ref != nil {
		want.Status, want.Reason, want.Message = corev1.ConditionTrue, ref.reason, ref.Error()
	}
	switch {
	case cur == nil && ref == nil:
		return conds
	case cur != nil && cur.Status == want.Status && cur.Reason == want.Reason && cur.Message == want.Message:
		return conds
	case cur != nil && cur.Status == want.Status:
		want.LastTransitionTime = cur.LastTransitionTime
	default:
		want.LastTransitionTime = metav1.NewTime(now)
	}
	return setCondition(conds, ConditionInvalidSpec, &want)
}

// refuseSpec reports that set's spec is not run (see above) and ends the reconcile for good.
func (r *Reconciler) refuseSpec(ctx context.Context, key string, set *v1beta1.StatefulSet, ref *refusal) (ctrl.Result, error) {
	now := r.Clock.Now()
	next := *set.Status.DeepCopy()
	next.ObservedGeneration = set.Generation
	next.Conditions = invalidSpecCondition(next.Conditions, ref, now)
	if cur := findCondition(set.Status.Conditions, ConditionInvalidSpec); cur == nil || cur.Status != corev1.ConditionTrue || cur.Message != ref.Error() {
		r.Control().Event(r.owner(set), corev1.EventTypeWarning, ref.reason, "%s", ref.Error())
	}
	if _, err := r.WriteStatus(ctx, key, set, set.Status, next, true, now); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, reconcile.TerminalError(ref)
}
