package broadcastjob

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// newJob is a started, running Always/FailFast job (the defaulted spec) of a one-container
// template with restartPolicy Never.
func newJob(mods ...func(*v1beta1.BroadcastJob)) *v1beta1.BroadcastJob {
	j := &v1beta1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bcj", UID: "job-uid"},
		Spec: v1beta1.BroadcastJobSpec{
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			},
			CompletionPolicy: v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyAlways},
			FailurePolicy:    v1beta1.BroadcastJobFailurePolicy{Type: v1beta1.BroadcastJobFailurePolicyTypeFailFast},
		},
		Status: v1beta1.BroadcastJobStatus{StartTime: &metav1.Time{Time: t0}, Phase: v1beta1.BroadcastJobPhaseRunning},
	}
	for _, m := range mods {
		m(j)
	}
	return j
}

// newNode is a node with room for anything, or changed by mods.
func newNode(name string, mods ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
	for _, m := range mods {
		m(n)
	}
	return n
}

func tainted(effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "example.com/maintenance", Effect: effect})
	}
}

func nodes(names ...string) []*corev1.Node {
	var out []*corev1.Node
	for _, n := range names {
		out = append(out, newNode(n))
	}
	return out
}

// newPodOn is job's pod on node, created by NewPod, named <node>-pod, in phase.
func newPodOn(job *v1beta1.BroadcastJob, node string, phase corev1.PodPhase, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := NewPod(job, node)
	p.Name = node + "-pod"
	p.UID = types.UID("uid-" + node)
	p.Spec.NodeName = node
	p.Status.Phase = phase
	p.CreationTimestamp = metav1.NewTime(t0)
	if phase == corev1.PodRunning {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c"}}
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func withRestarts(n int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: n}}
	}
}

func deleting(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }

// deletedNames are the names of the pods plan deletes.
func deletedNames(plan Plan) []string {
	var out []string
	for _, d := range plan.Delete {
		out = append(out, d.Pod.Name)
	}
	return out
}

func reasons(plan Plan) []string {
	var out []string
	for _, e := range plan.Events {
		out = append(out, e.Reason)
	}
	return out
}

func describePlan(p Plan) string {
	return fmt.Sprintf("create %v delete %v phase %s active %d succeeded %d failed %d desired %d conditions %d events %v requeue %s deleteJob %v",
		p.Create, deletedNames(p), p.Status.Phase, p.Status.Active, p.Status.Succeeded, p.Status.Failed, p.Status.Desired,
		len(p.Status.Conditions), reasons(p), p.RequeueAfter, p.DeleteJob)
}
