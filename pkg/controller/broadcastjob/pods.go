package broadcastjob

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
)

// gvk is the kind the pods' controller reference names: the stored version.
var gvk = v1beta1.GroupVersion.WithKind("BroadcastJob")

// NewPod is the pod job runs on node, as OpenKruise builds it from the template: generateName
// "<job>-" (the job's name alone when that is not a valid prefix), the template's labels plus
// appspub.BroadcastJobNameLabel and appspub.BroadcastJobControllerUIDLabel, its annotations and finalizers, the job as controller, and
// the template's spec with its required node affinity replaced by the node's name.
func NewPod(job *v1beta1.BroadcastJob, node string) *corev1.Pod {
	t := &job.Spec.Template
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[appspub.BroadcastJobNameLabel] = job.Name
	labels[appspub.BroadcastJobControllerUIDLabel] = string(job.UID)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    generateName(job.Name),
			Namespace:       job.Namespace,
			Labels:          labels,
			Annotations:     maps.Clone(t.Annotations),
			Finalizers:      slices.Clone(t.Finalizers),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, gvk)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	pod.Spec.Affinity = nodeeligibility.PinToNode(pod.Spec.Affinity, node)
	return pod
}

// generateName is the prefix of the job's pod names (Kubernetes' controller rule).
func generateName(job string) string {
	prefix := job + "-"
	if len(apivalidation.NameIsDNSSubdomain(prefix, true)) != 0 {
		return job
	}
	return prefix
}

// restarts is how many times the pod's containers, init containers included, restarted in total.
func restarts(pod *corev1.Pod) int32 {
	var n int32
	for _, s := range pod.Status.InitContainerStatuses {
		n += s.RestartCount
	}
	for _, s := range pod.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

// podState is what a pod means for its job.
type podState int

const (
	// podActive: the pod runs (or waits to), within its restart limit.
	podActive podState = iota
	// podSucceeded: phase Succeeded.
	podSucceeded
	// podFailed: phase Failed.
	podFailed
	// podOverLimit: still running with restartPolicy OnFailure, but restarted more than the
	// failure policy's restartLimit: failed for its job.
	podOverLimit
	// podTerminating: being deleted before it ended; not counted.
	podTerminating
)

// stateOf classifies pod as OpenKruise counts a job's pods.
func stateOf(pod *corev1.Pod, restartLimit int32) podState {
	switch {
	case pod.Status.Phase == corev1.PodSucceeded:
		return podSucceeded
	case pod.Status.Phase == corev1.PodFailed:
		return podFailed
	case pod.DeletionTimestamp != nil:
		return podTerminating
	case pod.Spec.RestartPolicy == corev1.RestartPolicyOnFailure && restarts(pod) > restartLimit:
		return podOverLimit
	}
	return podActive
}

// ended reports whether the pod's work on its node is over: it ended, or it failed by the limit.
func (s podState) ended() bool { return s == podSucceeded || s == podFailed || s == podOverLimit }
