package broadcastjob

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
)

// sim is a cluster for one job in a seeded history (h): nodes that come, go and get tainted, pods
// the job's plans create and delete and that run, restart, succeed and fail on their own.
type sim struct {
	h     *seqsim.History
	job   *v1beta1.BroadcastJob
	nodes map[string]*corev1.Node
	pods  map[string]*corev1.Pod
	seq   int
}

func newSim(h *seqsim.History) *sim {
	rnd := h.Rand()
	job := newJob(func(j *v1beta1.BroadcastJob) {
		j.Status = v1beta1.BroadcastJobStatus{}
		switch rnd.IntN(4) {
		case 0:
			j.Spec.Parallelism = &[]intstr.IntOrString{intstr.FromInt32(1)}[0]
		case 1:
			j.Spec.Parallelism = &[]intstr.IntOrString{intstr.FromString("40%")}[0]
		case 2:
			j.Spec.Parallelism = &[]intstr.IntOrString{intstr.FromInt32(3)}[0]
		}
		j.Spec.FailurePolicy.Type = []v1beta1.BroadcastJobFailurePolicyType{v1beta1.BroadcastJobFailurePolicyTypeFailFast,
			v1beta1.BroadcastJobFailurePolicyTypeContinue, v1beta1.BroadcastJobFailurePolicyTypePause}[rnd.IntN(3)]
		j.Spec.FailurePolicy.RestartLimit = int32(rnd.IntN(3))
		if rnd.IntN(2) == 0 {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		if rnd.IntN(3) == 0 {
			never(j)
		}
	})
	h.Logf("parallelism %v, failure policy %s, restart limit %d, restart policy %s, completes %v", job.Spec.Parallelism,
		job.Spec.FailurePolicy.Type, job.Spec.FailurePolicy.RestartLimit, job.Spec.Template.Spec.RestartPolicy, alwaysCompletes(job))
	s := &sim{h: h, job: job, nodes: map[string]*corev1.Node{}, pods: map[string]*corev1.Pod{}}
	for i := range 2 + rnd.IntN(5) {
		s.nodes[fmt.Sprintf("n%d", i)] = newNode(fmt.Sprintf("n%d", i))
	}
	return s
}

func (s *sim) snapshot() Snapshot {
	snap := Snapshot{Job: s.job.DeepCopy()}
	for _, name := range slices.Sorted(maps.Keys(s.nodes)) {
		snap.Nodes = append(snap.Nodes, s.nodes[name].DeepCopy())
	}
	for _, name := range slices.Sorted(maps.Keys(s.pods)) {
		snap.Pods = append(snap.Pods, s.pods[name].DeepCopy())
	}
	return snap
}

// reconcile plans, checks the plan's invariants and carries it out; it reports false once the
// job is deleted.
func (s *sim) reconcile() bool {
	snap := s.snapshot()
	plan := Compute(snap, s.h.Now())
	s.h.Logf("plan: %s", describePlan(plan))
	s.check(snap, plan)
	for _, d := range plan.Delete {
		if p := s.pods[d.Pod.Name]; p != nil && p.DeletionTimestamp == nil {
			p.DeletionTimestamp = &metav1.Time{Time: s.h.Now()}
		}
	}
	for _, node := range plan.Create {
		pod := NewPod(s.job, node)
		s.seq++
		pod.Name, pod.UID = fmt.Sprintf("p%d", s.seq), types.UID(fmt.Sprintf("u%d", s.seq))
		pod.CreationTimestamp = metav1.NewTime(s.h.Now())
		pod.Status.Phase = corev1.PodPending
		s.pods[pod.Name] = pod
	}
	s.job.Status = plan.Status
	return !plan.DeleteJob
}

// check asserts the invariants of one plan made from snap.
func (s *sim) check(snap Snapshot, plan Plan) {
	job := snap.Job
	if Finished(job) {
		if len(plan.Create)+len(plan.Delete) > 0 || len(plan.Events) > 0 {
			s.h.Fatalf("a finished job acted: %s", describePlan(plan))
		}
		return
	}
	onNode := map[string]bool{}
	failed := false
	for _, p := range snap.Pods {
		onNode[nodeeligibility.TargetNode(p)] = true
		if st := stateOf(p, job.Spec.FailurePolicy.RestartLimit); st == podFailed || st == podOverLimit {
			failed = true
		}
	}
	// One pod per node, only on nodes that take the template.
	for _, name := range plan.Create {
		node := s.nodes[name]
		if onNode[name] {
			s.h.Fatalf("created a second pod on %s", name)
		}
		if node == nil || !nodeeligibility.Evaluate(node, &job.Spec.Template.Spec, nodeeligibility.Rules{Resources: true}).Run {
			s.h.Fatalf("created a pod on %s, which does not take it", name)
		}
		onNode[name] = true
	}
	// Parallelism bounds what creations leave active.
	if limit, err := parallelism(job.Spec.Parallelism, int(plan.Status.Desired)); len(plan.Create) > 0 && (err != nil || plan.Status.Active > limit) {
		s.h.Fatalf("created %d pods leaving %d active, parallelism %d", len(plan.Create), plan.Status.Active, limit)
	}
	pol := job.Spec.FailurePolicy.Type
	finished := Finished(&v1beta1.BroadcastJob{Spec: job.Spec, Status: plan.Status})
	switch {
	case failed && pol == v1beta1.BroadcastJobFailurePolicyTypeFailFast && (!finished || plan.Status.Phase != v1beta1.BroadcastJobPhaseFailed):
		s.h.Fatalf("FailFast with a failed pod did not fail the job: %s", describePlan(plan))
	case failed && pol == v1beta1.BroadcastJobFailurePolicyTypePause && (len(plan.Create) > 0 || finished):
		s.h.Fatalf("Pause with a failed pod went on: %s", describePlan(plan))
	case finished && len(plan.Create) > 0:
		s.h.Fatalf("a plan that finishes the job creates pods: %s", describePlan(plan))
	}
}

// step changes the cluster at random: a pod runs, restarts, ends or goes; a node changes.
func (s *sim) step(settle bool) {
	names := slices.Sorted(maps.Keys(s.pods))
	if len(names) > 0 && (settle || s.h.Rand().IntN(3) > 0) {
		p := s.pods[names[s.h.Rand().IntN(len(names))]]
		s.progress(p, settle)
		return
	}
	if settle {
		return
	}
	nodeNames := slices.Sorted(maps.Keys(s.nodes))
	n := s.nodes[nodeNames[s.h.Rand().IntN(len(nodeNames))]]
	switch s.h.Rand().IntN(6) {
	case 0:
		n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	case 1:
		n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}}
	case 2, 3:
		n.Spec.Taints, n.Spec.Unschedulable = nil, false
	case 4:
		s.seq++
		name := fmt.Sprintf("new%d", s.seq)
		s.nodes[name] = newNode(name)
	case 5:
		if len(s.nodes) > 1 {
			delete(s.nodes, n.Name)
		}
	}
}

// progress moves one pod on as a kubelet would; settling, pods only move toward their end.
func (s *sim) progress(p *corev1.Pod, settle bool) {
	switch {
	case p.DeletionTimestamp != nil:
		delete(s.pods, p.Name)
	case p.Status.Phase == corev1.PodPending:
		p.Spec.NodeName = nodeeligibility.TargetNode(p)
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c"}}
	case p.Status.Phase == corev1.PodRunning:
		r := s.h.Rand().IntN(4)
		switch {
		case r == 0 && !settle:
			p.Status.Phase = corev1.PodFailed
		case r == 1 && p.Spec.RestartPolicy == corev1.RestartPolicyOnFailure:
			p.Status.ContainerStatuses[0].RestartCount++
		case r == 1:
			p.Status.Phase = corev1.PodFailed
		default:
			p.Status.Phase = corev1.PodSucceeded
		}
	}
}

// Random sequences of node changes and pod progress, with a plan after each: the invariants hold
// at every plan (check), and once the cluster settles an Always job finishes and a Never job has
// a pod on every node that takes it.
func TestBroadcastJobSequences(t *testing.T) {
	seqsim.Sequence{Seeds: seqsim.Seeds{First: 1, Count: 300}, Start: t0, Tick: seqsim.Seconds(1, 5)}.Run(t, func(h *seqsim.History) {
		s := newSim(h)
		// Every other step or so a reconcile, with pods and nodes changing at random; then the
		// cluster settles, a reconcile at every step. A plan that deletes the job ends the history.
		deleted := h.Steps(120, func() bool {
			alive := true
			if h.Rand().IntN(2) == 0 {
				alive = s.reconcile()
			}
			s.step(false)
			return !alive
		}) || h.Steps(200, func() bool {
			alive := s.reconcile()
			s.step(true)
			return !alive
		})
		if !deleted {
			s.reconcile()
			s.checkSettled()
		}
	})
}

// checkSettled asserts where a settled job ends: an Always job finished, a Never job with a pod on
// every node that takes it (unless a failure paused it).
func (s *sim) checkSettled() {
	st := s.job.Status
	pausedByFailure := s.job.Spec.FailurePolicy.Type == v1beta1.BroadcastJobFailurePolicyTypePause && st.Failed > 0
	switch {
	case alwaysCompletes(s.job) && !Finished(s.job) && !pausedByFailure:
		s.h.Fatalf("an Always job did not finish once settled: %+v", st)
	case !alwaysCompletes(s.job) && !Finished(s.job) && !pausedByFailure:
		for _, name := range slices.Sorted(maps.Keys(s.nodes)) {
			has := false
			for _, p := range s.pods {
				has = has || nodeeligibility.TargetNode(p) == name
			}
			if !has && nodeeligibility.Evaluate(s.nodes[name], &s.job.Spec.Template.Spec, nodeeligibility.Rules{Resources: true}).Run {
				s.h.Fatalf("a Never job left node %s without a pod", name)
			}
		}
	}
}
