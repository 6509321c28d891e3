package broadcastjob

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// want is what a case expects of a plan; nil slices mean none.
type want struct {
	create, delete, events []string
	phase                  v1beta1.BroadcastJobPhase
	active, succ, failed   int32
	desired                int32
	condition              v1beta1.BroadcastJobConditionType // "" none
	requeue                time.Duration
	deleteJob              bool
}

type planCase struct {
	name  string
	job   *v1beta1.BroadcastJob
	nodes []*corev1.Node
	pods  func(*v1beta1.BroadcastJob) []*corev1.Pod
	now   time.Time
	want  want
}

func runCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pods []*corev1.Pod
			if c.pods != nil {
				pods = c.pods(c.job)
			}
			now := c.now
			if now.IsZero() {
				now = t0.Add(time.Minute)
			}
			before := c.job.DeepCopy()
			p := Compute(Snapshot{Job: c.job, Nodes: c.nodes, Pods: pods}, now)
			w := c.want
			st := p.Status
			cond := v1beta1.BroadcastJobConditionType("")
			if n := len(st.Conditions); n > 0 {
				cond = st.Conditions[n-1].Type
			}
			if !slices.Equal(p.Create, w.create) || !slices.Equal(deletedNames(p), w.delete) || !slices.Equal(reasons(p), w.events) ||
				st.Phase != w.phase || st.Active != w.active || st.Succeeded != w.succ || st.Failed != w.failed || st.Desired != w.desired ||
				cond != w.condition || p.RequeueAfter != w.requeue || p.DeleteJob != w.deleteJob {
				t.Errorf("plan: %s\nwant: %+v", describePlan(p), w)
			}
			if !equalJobs(before, c.job) {
				t.Error("Compute changed the job it was given")
			}
		})
	}
}

func equalJobs(a, b *v1beta1.BroadcastJob) bool {
	return a.Status.Phase == b.Status.Phase && len(a.Status.Conditions) == len(b.Status.Conditions) &&
		a.Status.Active == b.Status.Active && ptr.Equal(a.Spec.Parallelism, b.Spec.Parallelism)
}

func par(v intstr.IntOrString) func(*v1beta1.BroadcastJob) {
	return func(j *v1beta1.BroadcastJob) { j.Spec.Parallelism = &v }
}

func failurePolicy(typ v1beta1.BroadcastJobFailurePolicyType, limit int32) func(*v1beta1.BroadcastJob) {
	return func(j *v1beta1.BroadcastJob) {
		j.Spec.FailurePolicy = v1beta1.BroadcastJobFailurePolicy{Type: typ, RestartLimit: limit}
	}
}

func never(j *v1beta1.BroadcastJob) {
	j.Spec.CompletionPolicy.Type = v1beta1.BroadcastJobCompletionPolicyNever
}

func deadlineSeconds(s int64) func(*v1beta1.BroadcastJob) {
	return func(j *v1beta1.BroadcastJob) { j.Spec.CompletionPolicy.ActiveDeadlineSeconds = &s }
}

func ttl(s int32) func(*v1beta1.BroadcastJob) {
	return func(j *v1beta1.BroadcastJob) { j.Spec.CompletionPolicy.TTLSecondsAfterFinished = &s }
}

func phase(ph v1beta1.BroadcastJobPhase) func(*v1beta1.BroadcastJob) {
	return func(j *v1beta1.BroadcastJob) { j.Status.Phase = ph }
}

func TestPlanParallelism(t *testing.T) {
	running := func(nodes ...string) func(*v1beta1.BroadcastJob) []*corev1.Pod {
		return func(j *v1beta1.BroadcastJob) []*corev1.Pod {
			var out []*corev1.Pod
			for _, n := range nodes {
				out = append(out, newPodOn(j, n, corev1.PodRunning))
			}
			return out
		}
	}
	runCases(t, []planCase{
		{name: "unset: a pod on every node at once", job: newJob(), nodes: nodes("n3", "n1", "n2"),
			want: want{create: []string{"n1", "n2", "n3"}, phase: "running", active: 3, desired: 3}},
		{name: "1 of 3: the first node by name", job: newJob(par(intstr.FromInt32(1))), nodes: nodes("n3", "n1", "n2"),
			want: want{create: []string{"n1"}, phase: "running", active: 1, desired: 3}},
		{name: "50% of 3 rounds up to 2", job: newJob(par(intstr.FromString("50%"))), nodes: nodes("n1", "n2", "n3"),
			want: want{create: []string{"n1", "n2"}, phase: "running", active: 2, desired: 3}},
		{name: "a slot frees when a pod ends", job: newJob(par(intstr.FromInt32(2))), nodes: nodes("n1", "n2", "n3"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodSucceeded), newPodOn(j, "n2", corev1.PodRunning)}
			},
			want: want{create: []string{"n3"}, phase: "running", active: 2, succ: 1, desired: 3}},
		{name: "at the limit: nothing", job: newJob(par(intstr.FromInt32(2))), nodes: nodes("n1", "n2", "n3"), pods: running("n1", "n2"),
			want: want{phase: "running", active: 2, desired: 3}},
		{name: "above a lowered limit: an event, nothing created", job: newJob(par(intstr.FromInt32(1))), nodes: nodes("n1", "n2", "n3"),
			pods: running("n1", "n2"), want: want{phase: "running", active: 2, desired: 3, events: []string{ReasonTooManyActivePods}}},
		{name: "0 holds the job", job: newJob(par(intstr.FromInt32(0))), nodes: nodes("n1"),
			want: want{phase: "running", desired: 1}},
		{name: "an invalid percentage is reported", job: newJob(par(intstr.FromString("lots"))), nodes: nodes("n1"),
			want: want{phase: "running", desired: 1, events: []string{ReasonInvalidSpec}}},
		{name: "a pod being deleted frees its slot but keeps its node", job: newJob(par(intstr.FromInt32(1))), nodes: nodes("n1", "n2"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning, deleting)}
			},
			want: want{create: []string{"n2"}, phase: "running", active: 1, desired: 2}},
	})
}

func TestPlanNodeEligibility(t *testing.T) {
	requests := func(cpu string) func(*v1beta1.BroadcastJob) {
		return func(j *v1beta1.BroadcastJob) {
			j.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
	}
	selector := func(j *v1beta1.BroadcastJob) {
		j.Spec.Template.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "n2"}
	}
	runCases(t, []planCase{
		{name: "a NoSchedule taint keeps a new pod off", job: newJob(),
			nodes: []*corev1.Node{newNode("n1", tainted(corev1.TaintEffectNoSchedule)), newNode("n2")},
			want:  want{create: []string{"n2"}, phase: "running", active: 1, desired: 1}},
		{name: "a NoSchedule taint lets a running pod stay", job: newJob(),
			nodes: []*corev1.Node{newNode("n1", tainted(corev1.TaintEffectNoSchedule))},
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning)}
			},
			want: want{phase: "running", active: 1, desired: 1}},
		{name: "a NoSchedule taint deletes a pod not yet bound", job: newJob(),
			nodes: []*corev1.Node{newNode("n1", tainted(corev1.TaintEffectNoSchedule))},
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodPending, func(p *corev1.Pod) { p.Spec.NodeName = "" })}
			},
			want: want{delete: []string{"n1-pod"}, phase: "running", active: 1}},
		{name: "a cordoned node gets no pod", job: newJob(),
			nodes: []*corev1.Node{newNode("n1", func(n *corev1.Node) { n.Spec.Unschedulable = true })},
			want:  want{phase: "running"}},
		{name: "a NoExecute taint evicts the pod and the node leaves desired", job: newJob(),
			nodes: []*corev1.Node{newNode("n1", tainted(corev1.TaintEffectNoExecute)), newNode("n2")},
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning), newPodOn(j, "n2", corev1.PodRunning)}
			},
			want: want{delete: []string{"n1-pod"}, phase: "running", active: 2, desired: 1}},
		{name: "a tolerated taint is no obstacle", job: newJob(func(j *v1beta1.BroadcastJob) {
			j.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/maintenance", Operator: corev1.TolerationOpExists}}
		}), nodes: []*corev1.Node{newNode("n1", tainted(corev1.TaintEffectNoExecute))},
			want: want{create: []string{"n1"}, phase: "running", active: 1, desired: 1}},
		{name: "the node selector picks the nodes", job: newJob(selector), nodes: nodes("n1", "n2", "n3"),
			want: want{create: []string{"n2"}, phase: "running", active: 1, desired: 1}},
		{name: "requests beyond a node's allocatable skip it", job: newJob(requests("6")),
			nodes: []*corev1.Node{newNode("n1"), newNode("n2", func(n *corev1.Node) { n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("8") })},
			want:  want{create: []string{"n2"}, phase: "running", active: 1, desired: 1}},
		{name: "a pod whose node is gone is deleted; an ended one stays counted", job: newJob(never), nodes: nodes("n1"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodSucceeded), newPodOn(j, "gone", corev1.PodPending),
					newPodOn(j, "gone2", corev1.PodSucceeded)}
			},
			want: want{delete: []string{"gone-pod"}, phase: "running", active: 1, succ: 2, desired: 1}},
		{name: "a new node gets a pod under Never", job: newJob(never), nodes: nodes("n1", "n2"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodSucceeded)}
			},
			want: want{create: []string{"n2"}, phase: "running", active: 1, succ: 1, desired: 2}},
		{name: "a duplicate is reported, the newer stands", job: newJob(), nodes: nodes("n1"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				b := newPodOn(j, "n1", corev1.PodRunning, func(p *corev1.Pod) { p.Name = "b"; p.CreationTimestamp.Time = t0.Add(time.Second) })
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodSucceeded), b}
			},
			want: want{phase: "running", active: 1, succ: 1, desired: 1, events: []string{ReasonDuplicatePod}}},
	})
}

func TestPlanCompletion(t *testing.T) {
	ended := func(phases ...corev1.PodPhase) func(*v1beta1.BroadcastJob) []*corev1.Pod {
		return func(j *v1beta1.BroadcastJob) []*corev1.Pod {
			var out []*corev1.Pod
			for i, ph := range phases {
				out = append(out, newPodOn(j, []string{"n1", "n2", "n3"}[i], ph))
			}
			return out
		}
	}
	runCases(t, []planCase{
		{name: "every node's pod succeeded: Complete", job: newJob(), nodes: nodes("n1", "n2", "n3"),
			pods: ended(corev1.PodSucceeded, corev1.PodSucceeded, corev1.PodSucceeded),
			want: want{phase: "completed", succ: 3, desired: 3, condition: v1beta1.BroadcastJobComplete, events: []string{ReasonJobComplete}}},
		{name: "Complete then deleted after the TTL", job: newJob(ttl(30)), nodes: nodes("n1"), pods: ended(corev1.PodSucceeded),
			want: want{phase: "completed", succ: 1, desired: 1, condition: v1beta1.BroadcastJobComplete, events: []string{ReasonJobComplete},
				requeue: 30 * time.Second}},
		{name: "one still running: not yet", job: newJob(), nodes: nodes("n1", "n2"), pods: ended(corev1.PodSucceeded, corev1.PodRunning),
			want: want{phase: "running", active: 1, succ: 1, desired: 2}},
		{name: "a pod being deleted before it ended: not yet", job: newJob(), nodes: nodes("n1"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning, deleting)}
			},
			want: want{phase: "running", desired: 1}},
		{name: "no node at all: not complete", job: newJob(), want: want{phase: "running"}},
		{name: "Never keeps running", job: newJob(never), nodes: nodes("n1"), pods: ended(corev1.PodSucceeded),
			want: want{phase: "running", succ: 1, desired: 1}},
		{name: "Continue completes with the failures counted", job: newJob(failurePolicy(v1beta1.BroadcastJobFailurePolicyTypeContinue, 0)),
			nodes: nodes("n1", "n2"), pods: ended(corev1.PodFailed, corev1.PodSucceeded),
			want: want{phase: "completed", succ: 1, failed: 1, desired: 2, condition: v1beta1.BroadcastJobComplete, events: []string{ReasonJobComplete}}},
		{name: "a pod past its restart limit counts as ended and is deleted", job: newJob(failurePolicy(v1beta1.BroadcastJobFailurePolicyTypeContinue, 1)),
			nodes: nodes("n1", "n2"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning, withRestarts(2)), newPodOn(j, "n2", corev1.PodSucceeded)}
			},
			want: want{delete: []string{"n1-pod"}, phase: "completed", succ: 1, failed: 1, desired: 2, condition: v1beta1.BroadcastJobComplete,
				events: []string{ReasonJobComplete}}},
		{name: "a first reconcile starts the job", job: newJob(func(j *v1beta1.BroadcastJob) { j.Status = v1beta1.BroadcastJobStatus{} }),
			nodes: nodes("n1"), want: want{create: []string{"n1"}, phase: "running", active: 1, desired: 1}},
	})
}

func TestPlanFailurePolicies(t *testing.T) {
	failedAndRunning := func(j *v1beta1.BroadcastJob) []*corev1.Pod {
		return []*corev1.Pod{newPodOn(j, "n1", corev1.PodFailed), newPodOn(j, "n2", corev1.PodRunning)}
	}
	pause := failurePolicy(v1beta1.BroadcastJobFailurePolicyTypePause, 0)
	runCases(t, []planCase{
		{name: "FailFast: a failed pod fails the job; running pods are deleted and count failed", job: newJob(ttl(10)),
			nodes: nodes("n1", "n2", "n3"), pods: failedAndRunning,
			want: want{delete: []string{"n2-pod"}, phase: "failed", failed: 2, desired: 3, condition: v1beta1.BroadcastJobFailed,
				events: []string{ReasonFailedPodFound}, requeue: 10 * time.Second}},
		{name: "Continue: the failed pod's node stays done, the others go on", job: newJob(failurePolicy(v1beta1.BroadcastJobFailurePolicyTypeContinue, 0)),
			nodes: nodes("n1", "n2", "n3"), pods: failedAndRunning,
			want: want{create: []string{"n3"}, phase: "running", active: 2, failed: 1, desired: 3}},
		{name: "Pause: the job holds", job: newJob(pause), nodes: nodes("n1", "n2", "n3"), pods: failedAndRunning,
			want: want{phase: "paused", active: 1, failed: 1, desired: 3, events: []string{ReasonPaused}}},
		{name: "Pause: held already, no new event", job: newJob(pause, phase(v1beta1.BroadcastJobPhasePaused)), nodes: nodes("n1", "n2", "n3"),
			pods: failedAndRunning, want: want{phase: "paused", active: 1, failed: 1, desired: 3}},
		{name: "Pause: the failed pod removed, the job goes on", job: newJob(pause, phase(v1beta1.BroadcastJobPhasePaused)),
			nodes: nodes("n1", "n2"), pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n2", corev1.PodSucceeded)}
			},
			want: want{create: []string{"n1"}, phase: "running", active: 1, succ: 1, desired: 2, events: []string{ReasonContinue}}},
		{name: "Pause: every pod ended but one failed: held, not complete", job: newJob(pause), nodes: nodes("n1", "n2"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodFailed), newPodOn(j, "n2", corev1.PodSucceeded)}
			},
			want: want{phase: "paused", succ: 1, failed: 1, desired: 2, events: []string{ReasonPaused}}},
		{name: "restarts within the limit: active", job: newJob(failurePolicy(v1beta1.BroadcastJobFailurePolicyTypeFailFast, 3)),
			nodes: nodes("n1"), pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning, withRestarts(3))}
			},
			want: want{phase: "running", active: 1, desired: 1}},
		{name: "restarts past the limit: failed, the job fails and deletes it", job: newJob(failurePolicy(v1beta1.BroadcastJobFailurePolicyTypeFailFast, 2)),
			nodes: nodes("n1"), pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning, withRestarts(3))}
			},
			want: want{delete: []string{"n1-pod"}, phase: "failed", failed: 1, desired: 1, condition: v1beta1.BroadcastJobFailed, events: []string{ReasonFailedPodFound}}},
		{name: "restarts of a Never pod do not count", job: newJob(), nodes: nodes("n1"),
			pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning, func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = 5 })}
			},
			want: want{phase: "running", active: 1, desired: 1}},
		{name: "spec.paused: no pods, phase paused", job: newJob(func(j *v1beta1.BroadcastJob) { j.Spec.Paused = true }), nodes: nodes("n1"),
			want: want{phase: "paused", desired: 1}},
		{name: "unpaused: Continue", job: newJob(phase(v1beta1.BroadcastJobPhasePaused)), nodes: nodes("n1"),
			want: want{create: []string{"n1"}, phase: "running", active: 1, desired: 1, events: []string{ReasonContinue}}},
	})
}

func TestPlanDeadlineAndTTL(t *testing.T) {
	running := func(j *v1beta1.BroadcastJob) []*corev1.Pod {
		return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning), newPodOn(j, "n2", corev1.PodSucceeded)}
	}
	finished := func(typ v1beta1.BroadcastJobConditionType, status corev1.ConditionStatus) func(*v1beta1.BroadcastJob) {
		return func(j *v1beta1.BroadcastJob) {
			j.Status.Conditions = []v1beta1.BroadcastJobCondition{{Type: typ, Status: status}}
			j.Status.CompletionTime = &metav1.Time{Time: t0.Add(time.Minute)}
			j.Status.Phase = v1beta1.BroadcastJobPhaseCompleted
		}
	}
	runCases(t, []planCase{
		{name: "before the deadline: requeued at it", job: newJob(deadlineSeconds(90)), nodes: nodes("n1", "n2"), pods: running, now: t0.Add(60 * time.Second),
			want: want{phase: "running", active: 1, succ: 1, desired: 2, requeue: 30 * time.Second}},
		{name: "at the deadline: Failed, the running pods deleted", job: newJob(deadlineSeconds(60)), nodes: nodes("n1", "n2"), pods: running,
			now: t0.Add(60 * time.Second),
			want: want{delete: []string{"n1-pod"}, phase: "failed", succ: 1, failed: 1, desired: 2, condition: v1beta1.BroadcastJobFailed,
				events: []string{ReasonDeadlineExceeded}}},
		{name: "a paused job fails at its deadline too", job: newJob(deadlineSeconds(60), func(j *v1beta1.BroadcastJob) { j.Spec.Paused = true }),
			nodes: nodes("n1", "n2"), pods: running, now: t0.Add(61 * time.Second),
			want: want{delete: []string{"n1-pod"}, phase: "failed", succ: 1, failed: 1, desired: 2, condition: v1beta1.BroadcastJobFailed,
				events: []string{ReasonDeadlineExceeded}}},
		{name: "Never has no deadline", job: newJob(never, deadlineSeconds(60)), nodes: nodes("n1", "n2"), pods: running, now: t0.Add(time.Hour),
			want: want{phase: "running", active: 1, succ: 1, desired: 2}},
		{name: "a new job's deadline counts from now", job: newJob(deadlineSeconds(60), func(j *v1beta1.BroadcastJob) { j.Status = v1beta1.BroadcastJobStatus{} }),
			nodes: nodes("n1"), now: t0,
			want: want{create: []string{"n1"}, phase: "running", active: 1, desired: 1, requeue: time.Minute}},
		{name: "finished, TTL ahead: wait for it", job: newJob(ttl(100), finished(v1beta1.BroadcastJobComplete, corev1.ConditionTrue)),
			nodes: nodes("n1", "n2"), now: t0.Add(2 * time.Minute),
			want: want{phase: "completed", condition: v1beta1.BroadcastJobComplete, requeue: 40 * time.Second}},
		{name: "finished, TTL passed: delete the job", job: newJob(ttl(100), finished(v1beta1.BroadcastJobFailed, corev1.ConditionTrue)),
			nodes: nodes("n1"), now: t0.Add(3 * time.Minute),
			want: want{phase: "completed", condition: v1beta1.BroadcastJobFailed, deleteJob: true}},
		{name: "finished, no TTL: nothing, ever", job: newJob(finished(v1beta1.BroadcastJobComplete, corev1.ConditionTrue)),
			nodes: nodes("n1", "n2"), now: t0.Add(3 * time.Hour), want: want{phase: "completed", condition: v1beta1.BroadcastJobComplete}},
		{name: "a False condition is not finished", job: newJob(finished(v1beta1.BroadcastJobComplete, corev1.ConditionFalse)),
			nodes: nodes("n1"), pods: func(j *v1beta1.BroadcastJob) []*corev1.Pod {
				return []*corev1.Pod{newPodOn(j, "n1", corev1.PodRunning)}
			},
			want: want{phase: "running", active: 1, desired: 1, condition: v1beta1.BroadcastJobComplete}},
	})
}
