package podgate

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// kruiseGroup is the API group of the workloads whose pods get the gate.
const kruiseGroup = "apps.kruise.io"

// ownedKinds are the Kruise workloads whose pods carry KruisePodReady.
var ownedKinds = map[string]bool{"CloneSet": true, "StatefulSet": true}

// Has reports whether pod carries the readiness gate of condition type t.
func Has(pod *corev1.Pod, t corev1.PodConditionType) bool {
	return slices.ContainsFunc(pod.Spec.ReadinessGates, func(g corev1.PodReadinessGate) bool { return g.ConditionType == t })
}

// HasKruisePodReady reports whether pod carries the KruisePodReady gate.
func HasKruisePodReady(pod *corev1.Pod) bool {
	return Has(pod, appspub.KruisePodReadyConditionType)
}

// OwnedByKruise reports whether the pod's controller is a Kruise workload whose pods carry
// KruisePodReady.
func OwnedByKruise(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == kruiseGroup && ownedKinds[ref.Kind]
}

// AddKruisePodReady adds the KruisePodReady readiness gate to a pod of a Kruise workload that lacks
// it, and reports whether it did. Other pods are left as they are.
func AddKruisePodReady(pod *corev1.Pod) bool {
	if !OwnedByKruise(pod) || HasKruisePodReady(pod) {
		return false
	}
	pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: appspub.KruisePodReadyConditionType})
	return true
}
