package podreadiness

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
)

// gatedPods passes the events of pods that carry the gate, and of an update only one that changes
// what Reconcile reads of the pod: most pod updates (a kubelet's status, an in-place update's
// images and revision) change none of it, and a rollout of N pods would otherwise cost some 7N
// reconciles that write nothing.
func gatedPods() predicate.Predicate {
	gated := predicate.NewPredicateFuncs(func(o client.Object) bool {
		pod, ok := o.(*corev1.Pod)
		return ok && podgate.HasKruisePodReady(pod)
	})
	changed := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, okOld := e.ObjectOld.(*corev1.Pod)
		pod, ok := e.ObjectNew.(*corev1.Pod)
		return !okOld || !ok || readChanged(old, pod)
	}}
	return predicate.And(gated, changed)
}

// readChanged reports whether new differs from old in what Reconcile reads: the gate, the
// deletion, the lifecycle state, the ContainerRecreateRequest it names, and the KruisePodReady
// condition (its status and holders).
func readChanged(old, new *corev1.Pod) bool {
	return podgate.HasKruisePodReady(old) != podgate.HasKruisePodReady(new) ||
		(old.DeletionTimestamp == nil) != (new.DeletionTimestamp == nil) ||
		lifecycle.State(old) != lifecycle.State(new) ||
		old.Annotations[v1alpha1.ContainerRecreateRequestUnreadyPodKey] != new.Annotations[v1alpha1.ContainerRecreateRequestUnreadyPodKey] ||
		!sameCondition(current(old), current(new))
}

// sameCondition compares what Reconcile reads of a KruisePodReady condition.
func sameCondition(a, b *corev1.PodCondition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Message == b.Message
}
