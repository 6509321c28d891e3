package broadcastjob

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
)

// sim is a cluster for one job: nodes that come, go and get tainted, pods the job's plans create
// and delete and that run, restart, succeed and fail on their own, and a clock.
type sim struct {
	rnd   *rand.Rand
	now   time.Time
	job   *v1beta1.BroadcastJob
	nodes map[string]*corev1.Node
	pods  map[string]*corev1.Pod
	seq   int
	log   []string
}

func newSim(seed int64) *sim {
	rnd := rand.New(rand.NewSource(seed))
	job := newJob(func(j *v1beta1.BroadcastJob) {
		j.Status = v1beta1.BroadcastJobStatus{}
		switch rnd.Intn(4) {
		case 0:
			j.Spec.Parallelism = &[]intstr.IntOrString{intstr.FromInt32(1)}[0]
		case 1:
			j.Spec.Parallelism = &[]intstr.IntOrString{intstr.FromString("40%")}[0]
		case 2:
			j.Spec.Parallelism = &[]intstr.IntOrString{intstr.FromInt32(3)}[0]
		}
		j.Spec.FailurePolicy.Type = []v1beta1.BroadcastJobFailurePolicyType{v1beta1.BroadcastJobFailurePolicyTypeFailFast,
			v1beta1.BroadcastJobFailurePolicyTypeContinue, v1beta1.BroadcastJobFailurePolicyTypePause}[rnd.Intn(3)]
		j.Spec.FailurePolicy.RestartLimit = int32(rnd.Intn(3))
		if rnd.Intn(2) == 0 {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}
		if rnd.Intn(3) == 0 {
			never(j)
		}
	})
	s := &sim{rnd: rnd, now: t0, job: job, nodes: map[string]*corev1.Node{}, pods: map[string]*corev1.Pod{}}
	for i := range 2 + rnd.Intn(5) {
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
func (s *sim) reconcile(t *testing.T) bool {
	t.Helper()
	snap := s.snapshot()
	plan := Compute(snap, s.now)
	s.log = append(s.log, fmt.Sprintf("%s plan: %s", s.now.Format("15:04:05"), describePlan(plan)))
	s.check(t, snap, plan)
	for _, d := range plan.Delete {
		if p := s.pods[d.Pod.Name]; p != nil && p.DeletionTimestamp == nil {
			p.DeletionTimestamp = &metav1.Time{Time: s.now}
		}
	}
	for _, node := range plan.Create {
		pod := NewPod(s.job, node)
		s.seq++
		pod.Name, pod.UID = fmt.Sprintf("p%d", s.seq), types.UID(fmt.Sprintf("u%d", s.seq))
		pod.CreationTimestamp = metav1.NewTime(s.now)
		pod.Status.Phase = corev1.PodPending
		s.pods[pod.Name] = pod
	}
	s.job.Status = plan.Status
	return !plan.DeleteJob
}

// check asserts the invariants of one plan made from snap.
func (s *sim) check(t *testing.T, snap Snapshot, plan Plan) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Fatalf("%s\nhistory:\n%s", fmt.Sprintf(format, args...), strings.Join(s.log, "\n"))
	}
	job := snap.Job
	if Finished(job) {
		if len(plan.Create)+len(plan.Delete) > 0 || len(plan.Events) > 0 {
			fail("a finished job acted: %s", describePlan(plan))
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
			fail("created a second pod on %s", name)
		}
		if node == nil || !nodeeligibility.Evaluate(node, &job.Spec.Template.Spec, nodeeligibility.Rules{Resources: true}).Run {
			fail("created a pod on %s, which does not take it", name)
		}
		onNode[name] = true
	}
	// Parallelism bounds what creations leave active.
	if limit, err := parallelism(job.Spec.Parallelism, int(plan.Status.Desired)); len(plan.Create) > 0 && (err != nil || plan.Status.Active > limit) {
		fail("created %d pods leaving %d active, parallelism %d", len(plan.Create), plan.Status.Active, limit)
	}
	pol := job.Spec.FailurePolicy.Type
	finished := Finished(&v1beta1.BroadcastJob{Spec: job.Spec, Status: plan.Status})
	switch {
	case failed && pol == v1beta1.BroadcastJobFailurePolicyTypeFailFast && (!finished || plan.Status.Phase != v1beta1.BroadcastJobPhaseFailed):
		fail("FailFast with a failed pod did not fail the job: %s", describePlan(plan))
	case failed && pol == v1beta1.BroadcastJobFailurePolicyTypePause && (len(plan.Create) > 0 || finished):
		fail("Pause with a failed pod went on: %s", describePlan(plan))
	case finished && len(plan.Create) > 0:
		fail("a plan that finishes the job creates pods: %s", describePlan(plan))
	}
}

// step changes the cluster at random: a pod runs, restarts, ends or goes; a node changes; time passes.
func (s *sim) step(settle bool) {
	s.now = s.now.Add(time.Duration(1+s.rnd.Intn(5)) * time.Second)
	names := slices.Sorted(maps.Keys(s.pods))
	if len(names) > 0 && (settle || s.rnd.Intn(3) > 0) {
		p := s.pods[names[s.rnd.Intn(len(names))]]
		s.progress(p, settle)
		return
	}
	if settle {
		return
	}
	nodeNames := slices.Sorted(maps.Keys(s.nodes))
	n := s.nodes[nodeNames[s.rnd.Intn(len(nodeNames))]]
	switch s.rnd.Intn(6) {
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
		r := s.rnd.Intn(4)
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
	for seed := int64(1); seed <= 300; seed++ {
		s := newSim(seed)
		alive := true
		for range 120 {
			if !alive {
				break
			}
			if s.rnd.Intn(2) == 0 {
				alive = s.reconcile(t)
			}
			s.step(false)
		}
		for range 200 {
			if !alive {
				break
			}
			alive = s.reconcile(t)
			s.step(true)
		}
		if !alive {
			continue
		}
		s.reconcile(t)
		st := s.job.Status
		pausedByFailure := s.job.Spec.FailurePolicy.Type == v1beta1.BroadcastJobFailurePolicyTypePause && st.Failed > 0
		switch {
		case alwaysCompletes(s.job) && !Finished(s.job) && !pausedByFailure:
			t.Fatalf("seed %d: an Always job did not finish once settled: %+v\n%s", seed, st, strings.Join(s.log, "\n"))
		case !alwaysCompletes(s.job) && !Finished(s.job) && !pausedByFailure:
			for name, node := range s.nodes {
				has := false
				for _, p := range s.pods {
					has = has || nodeeligibility.TargetNode(p) == name
				}
				if !has && nodeeligibility.Evaluate(node, &s.job.Spec.Template.Spec, nodeeligibility.Rules{Resources: true}).Run {
					t.Fatalf("seed %d: a Never job left node %s without a pod\n%s", seed, name, strings.Join(s.log, "\n"))
				}
			}
		}
	}
}
