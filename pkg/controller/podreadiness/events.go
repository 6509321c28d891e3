package podreadiness

import (
	corev1 "k8s.io/api/core/v1"
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
	gated := func(pod *corev1.Pod, ok bool) bool { return ok && podgate.HasKruisePodReady(pod) }
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { pod, ok := e.Object.(*corev1.Pod); return gated(pod, ok) },
		DeleteFunc:  func(e event.DeleteEvent) bool { pod, ok := e.Object.(*corev1.Pod); return gated(pod, ok) },
		GenericFunc: func(e event.GenericEvent) bool { pod, ok := e.Object.(*corev1.Pod); return gated(pod, ok) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*corev1.Pod)
			pod, ok := e.ObjectNew.(*corev1.Pod)
			return gated(pod, ok) && (!okOld || readChanged(old, pod))
		},
	}
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
