package broadcastjob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
)

// A job's pod is OpenKruise's: generateName, labels, annotations, finalizers, the controller
// reference, the template's spec, and the required node affinity replaced by the node's name
// (preferred terms kept).
func TestNewPodIsOpenKruisesPod(t *testing.T) {
	job := newJob(func(j *v1beta1.BroadcastJob) {
		j.Spec.Template.Annotations = map[string]string{"a": "b"}
		j.Spec.Template.Finalizers = []string{"example.com/keep"}
		j.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}},
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "ssd", Operator: corev1.NodeSelectorOpExists}}}}},
		}}
	})
	pod := NewPod(job, "n1")
	if pod.Name != "" || pod.GenerateName != "bcj-" || pod.Namespace != "ns" {
		t.Errorf("name %q generateName %q namespace %q", pod.Name, pod.GenerateName, pod.Namespace)
	}
	wantLabels := map[string]string{"app": "x", appspub.BroadcastJobNameLabel: "bcj", appspub.BroadcastJobControllerUIDLabel: "job-uid"}
	if !equality.Semantic.DeepEqual(pod.Labels, wantLabels) || pod.Annotations["a"] != "b" || len(pod.Finalizers) != 1 {
		t.Errorf("labels %v annotations %v finalizers %v", pod.Labels, pod.Annotations, pod.Finalizers)
	}
	ref := pod.OwnerReferences
	if len(ref) != 1 || ref[0].APIVersion != "apps.kruise.io/v1beta1" || ref[0].Kind != "BroadcastJob" || ref[0].Name != "bcj" ||
		ref[0].UID != "job-uid" || !ptr.Deref(ref[0].Controller, false) || !ptr.Deref(ref[0].BlockOwnerDeletion, false) {
		t.Errorf("owner references %+v", ref)
	}
	if pod.Spec.NodeName != "" || nodeeligibility.TargetNode(pod) != "n1" {
		t.Errorf("nodeName %q, target %q: want the scheduler to bind it to n1", pod.Spec.NodeName, nodeeligibility.TargetNode(pod))
	}
	if terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; len(terms) != 1 || len(terms[0].MatchExpressions) != 0 {
		t.Errorf("required terms %+v: want only the node's name", terms)
	}
	if len(pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Error("preferred terms dropped")
	}
	if len(job.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions) != 1 ||
		job.Spec.Template.Labels[appspub.BroadcastJobNameLabel] != "" {
		t.Error("NewPod changed the job's template")
	}
}

func TestGenerateName(t *testing.T) {
	if got := generateName("job"); got != "job-" {
		t.Errorf("generateName(job) = %q", got)
	}
	long := strings.Repeat("a", 254) // no valid prefix (the API server refuses such a job anyway)
	if got := generateName(long); got != long {
		t.Errorf("a name too long for a prefix: %q, want the name itself", got)
	}
}

func TestStateOf(t *testing.T) {
	job := newJob()
	for name, c := range map[string]struct {
		pod   *corev1.Pod
		limit int32
		want  podState
	}{
		"running":                       {newPodOn(job, "n", corev1.PodRunning), 0, podActive},
		"pending":                       {newPodOn(job, "n", corev1.PodPending), 0, podActive},
		"succeeded, even if deleting":   {newPodOn(job, "n", corev1.PodSucceeded, deleting), 0, podSucceeded},
		"failed":                        {newPodOn(job, "n", corev1.PodFailed), 0, podFailed},
		"deleting before it ended":      {newPodOn(job, "n", corev1.PodRunning, deleting), 0, podTerminating},
		"OnFailure at its limit":        {newPodOn(job, "n", corev1.PodRunning, withRestarts(2)), 2, podActive},
		"OnFailure past its limit":      {newPodOn(job, "n", corev1.PodRunning, withRestarts(3)), 2, podOverLimit},
		"OnFailure, limit 0, 1 restart": {newPodOn(job, "n", corev1.PodRunning, withRestarts(1)), 0, podOverLimit},
		"init containers count": {newPodOn(job, "n", corev1.PodPending, withRestarts(0), func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i", RestartCount: 2}}
		}), 1, podOverLimit},
	} {
		if got := stateOf(c.pod, c.limit); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
