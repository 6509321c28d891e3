package sidecarset_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	planner "github.com/kruise-ng/kruise/pkg/controller/sidecarset"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// Tests of Compute against OpenKruise v1.9.0's SidecarSet processor (calculateStatus) and its
// strategy (GetNextUpgradePods, SortUpdateIndexes, calculateUpgradeCount).

var (
	plT0 = metav1.NewTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	plT1 = metav1.NewTime(plT0.Add(time.Hour))
	plT2 = metav1.NewTime(plT0.Add(2 * time.Hour))
)

// plSet is the SidecarSet "mesh" (generation 7) selecting app=web, with one sidecar "proxy" on image.
func plSet(image string, mutate ...func(*v1beta1.SidecarSet)) *v1beta1.SidecarSet {
	s := &v1beta1.SidecarSet{
		ObjectMeta: metav1.ObjectMeta{Name: "mesh", Generation: 7},
		Spec: v1beta1.SidecarSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Containers: []v1beta1.SidecarSetContainer{{Container: corev1.Container{Name: "proxy", Image: image},
				PodInjectPolicy: v1beta1.SidecarSetBeforeAppContainer}},
		},
	}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// The SidecarSet's versions: v1, v2 and v3 differ in the proxy image only; wider differs from them in
// more than images.
func plV1() *v1beta1.SidecarSet { return plSet("proxy:1") }
func plV2() *v1beta1.SidecarSet { return plSet("proxy:2") }
func plWider() *v1beta1.SidecarSet {
	return plSet("proxy:1", func(s *v1beta1.SidecarSet) { s.Spec.Containers[0].Command = []string{"run"} })
}

type plOpt func(*corev1.Pod)

// plPod is the pod ns/name into which sidecarrules.Inject put the sidecars of at, scheduled, created at plT0,
// running and ready since plT0, each container ready on its spec image (image ID "id-<image>").
func plPod(t *testing.T, name string, at *v1beta1.SidecarSet, opts ...plOpt) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "web"}, CreationTimestamp: plT0},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	res, err := sidecarrules.Inject(pod, []*v1beta1.SidecarSet{at}, sidecarrules.Options{Now: plT0})
	if err != nil {
		t.Fatalf("Inject: %v", err)
	}
	p := res.Pod
	if !sidecarrules.Injected(p, at) {
		t.Fatalf("pod %s does not carry the sidecars of %s", name, at.Name)
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: plT0}}}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "id-" + c.Image, Ready: true})
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// plLagging is pod after its sidecars were upgraded in place to set (sidecarrules.PlanUpgrade applied to its
// spec and annotations) while the kubelet still runs the old images.
func plLagging(t *testing.T, pod *corev1.Pod, set *v1beta1.SidecarSet) *corev1.Pod {
	t.Helper()
	up, err := sidecarrules.PlanUpgrade(pod, set, plT1)
	if err != nil {
		t.Fatalf("PlanUpgrade: %v", err)
	}
	p := pod.DeepCopy()
	for i := range p.Spec.Containers {
		if img, ok := up.Images[p.Spec.Containers[i].Name]; ok {
			p.Spec.Containers[i].Image = img
		}
	}
	maps.Copy(p.Annotations, up.Annotations)
	return p
}

func plLabel(k, v string) plOpt { return func(p *corev1.Pod) { p.Labels[k] = v } }

func plNotReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

func plPending(p *corev1.Pod) { p.Status.Phase, p.Status.Conditions = corev1.PodPending, nil }

func plUnscheduled(p *corev1.Pod) {
	p.Spec.NodeName, p.Status.Phase, p.Status.Conditions = "", corev1.PodPending, nil
}

func plReadySince(at metav1.Time) plOpt {
	return func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = at }
}

func plRestarts(n int32) plOpt {
	return func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = n }
}

func plCreated(at metav1.Time) plOpt { return func(p *corev1.Pod) { p.CreationTimestamp = at } }

func plNamespace(ns string) plOpt { return func(p *corev1.Pod) { p.Namespace = ns } }

func plNames(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func plKeys(pods []*corev1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// plOld are n running, ready pods p0, p1, … at v1.
func plOld(t *testing.T, n int, opts ...plOpt) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		out = append(out, plPod(t, "p"+string(rune('0'+i)), plV1(), opts...))
	}
	return out
}

func ios(v string) *intstr.IntOrString {
	x := intstr.Parse(v)
	return &x
}

// TestComputeStatus: the status OpenKruise's calculateStatus writes.
func TestComputeStatus(t *testing.T) {
	set := plV2()
	pods := []*corev1.Pod{
		plPod(t, "old-ready", plV1()),
		plPod(t, "old-not-ready", plV1(), plNotReady),
		plPod(t, "new-ready", plV2()),
		plPod(t, "new-not-ready", plV2(), plNotReady),
		// Upgraded in place and running, but the kubelet has not restarted the proxy yet: updated,
		// not ready.
		plLagging(t, plPod(t, "new-lagging", plV1()), set),
		// More than images differ: neither updated nor upgradable, but ready.
		plPod(t, "wider-ready", plWider()),
	}
	plan := planner.Compute(set, pods, "mesh-5d8f7c9b4", 3)
	st := plan.Status
	if st.MatchedPods != 6 || st.UpdatedPods != 3 || st.ReadyPods != 3 || st.UpdatedReadyPods != 1 {
		t.Errorf("matched/updated/ready/updatedReady = %d/%d/%d/%d, want 6/3/3/1", st.MatchedPods, st.UpdatedPods, st.ReadyPods, st.UpdatedReadyPods)
	}
	if st.LatestRevision != "mesh-5d8f7c9b4" || st.CollisionCount == nil || *st.CollisionCount != 3 || st.ObservedGeneration != 7 {
		t.Errorf("latestRevision/collisionCount/observedGeneration = %q/%v/%d, want mesh-5d8f7c9b4/3/7", st.LatestRevision, st.CollisionCount, st.ObservedGeneration)
	}
	// Two updated pods are not ready, more than maxUnavailable (1): only the pod not ready anyway goes.
	if got := plNames(plan.Upgrade); !slices.Equal(got, []string{"old-not-ready"}) {
		t.Errorf("Upgrade = %v, want [old-not-ready]", got)
	}
	if got := plNames(plan.NotUpgradable); !slices.Equal(got, []string{"wider-ready"}) {
		t.Errorf("NotUpgradable = %v, want [wider-ready]", got)
	}

	empty := planner.Compute(set, nil, "mesh-5d8f7c9b4", 0)
	if empty.Status.MatchedPods != 0 || empty.Status.CollisionCount == nil || *empty.Status.CollisionCount != 0 || empty.Upgrade != nil || empty.Why != "" {
		t.Errorf("no pods: plan = %+v", empty)
	}
}

// TestCompute: which pods are upgraded now, which are left behind, and why none is.
func TestCompute(t *testing.T) {
	cases := []struct {
		name          string
		set           func(*v1beta1.SidecarSet)
		pods          func(*testing.T) []*corev1.Pod
		upgrade       []string
		notUpgradable []string
		why           string // a part of Why; "" when Why must be empty
	}{{
		name: "every pod updated: nothing to do",
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV2()), plPod(t, "b", plV2(), plNotReady)}
		},
	}, {
		name: "type NotUpdate",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.Type = v1beta1.SidecarSetNotUpdateStrategy },
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV1()), plPod(t, "w", plWider())}
		},
		why: "NotUpdate",
	}, {
		name: "paused",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.Paused = true },
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV1()), plPod(t, "w", plWider())}
		},
		why: "paused",
	}, {
		name: "invalid updateStrategy.selector: nothing selected",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "canary", Operator: "Bogus", Values: []string{"x"}}}}
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV1()), plPod(t, "w", plWider())}
		},
		why: "selector",
	}, {
		name: "updateStrategy.selector restricts the candidates, the pods left behind too",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV1()), plPod(t, "b", plV1(), plLabel("canary", "true")),
				plPod(t, "c", plV1(), plLabel("canary", "false")), plPod(t, "d", plV1(), plLabel("canary", "true")),
				plPod(t, "w1", plWider()), plPod(t, "w2", plWider(), plLabel("canary", "true"))}
		},
		upgrade:       []string{"b", "d"},
		notUpgradable: []string{"w2"},
	}, {
		name: "pods whose sidecars differ beyond images are left behind, the others go",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("100%") },
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "w1", plWider()), plPod(t, "a", plV1()), plPod(t, "w2", plWider(), plNotReady)}
		},
		upgrade:       []string{"a"},
		notUpgradable: []string{"w1", "w2"},
	}, {
		name: "a pod whose previous upgrade is in flight is skipped and costs nothing",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.Containers[0].Image = "proxy:3" },
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plLagging(t, plPod(t, "a-lagging", plV1()), plV2()), plPod(t, "b", plV1())}
		},
		upgrade: []string{"b"},
	}, {
		name: "partition keeps the last waiting pods",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("1")
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods:    func(t *testing.T) []*corev1.Pod { return plOld(t, 4) },
		upgrade: []string{"p0", "p1", "p2"},
	}, {
		name: "partition counts the pods still waiting, not the updated ones",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("2")
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 3), plPod(t, "u0", plV2()), plPod(t, "u1", plV2()))
		},
		upgrade: []string{"p0"},
	}, {
		name: "pods left behind are not among the waiting pods the partition keeps",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("1")
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 2), plPod(t, "w", plWider()))
		},
		upgrade:       []string{"p0"},
		notUpgradable: []string{"w"},
	}, {
		name: "partition of all waiting pods",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("3")
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod { return append(plOld(t, 3), plPod(t, "u0", plV2())) },
		why:  "partition",
	}, {
		name: "partition percent of the matched pods",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("40%") // of 5 pods: 2
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods:    func(t *testing.T) []*corev1.Pod { return plOld(t, 5) },
		upgrade: []string{"p0", "p1", "p2"},
	}, {
		name: "partition percent of all the matched pods, updated ones too",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("30%") // of 10 pods: 3
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod {
			pods := plOld(t, 4)
			for _, n := range []string{"u0", "u1", "u2", "u3", "u4", "u5"} {
				pods = append(pods, plPod(t, n, plV2()))
			}
			return pods
		},
		upgrade: []string{"p0"},
	}, {
		name: "partition 100%",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("100%")
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod { return plOld(t, 5) },
		why:  "partition",
	}, {
		name: "partition among the selected pods",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
			s.Spec.UpdateStrategy.Partition = ios("1")
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 2), plPod(t, "c0", plV1(), plLabel("canary", "true")), plPod(t, "c1", plV1(), plLabel("canary", "true")))
		},
		upgrade: []string{"c0"},
	}, {
		name:    "maxUnavailable defaults to 1",
		pods:    func(t *testing.T) []*corev1.Pod { return plOld(t, 4) },
		upgrade: []string{"p0"},
	}, {
		name:    "maxUnavailable int",
		set:     func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("2") },
		pods:    func(t *testing.T) []*corev1.Pod { return plOld(t, 4) },
		upgrade: []string{"p0", "p1"},
	}, {
		name:    "maxUnavailable percent of the matched pods",
		set:     func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("50%") }, // of 6 pods: 3
		pods:    func(t *testing.T) []*corev1.Pod { return plOld(t, 6) },
		upgrade: []string{"p0", "p1", "p2"},
	}, {
		name: "maxUnavailable percent of all the matched pods, updated ones too",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("20%") }, // of 10 pods: 2
		pods: func(t *testing.T) []*corev1.Pod {
			pods := plOld(t, 4)
			for _, n := range []string{"u0", "u1", "u2", "u3", "u4", "u5"} {
				pods = append(pods, plPod(t, n, plV2()))
			}
			return pods
		},
		upgrade: []string{"p0", "p1"},
	}, {
		name: "an updated pod not ready counts against maxUnavailable",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("2") },
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 4), plPod(t, "u", plV2(), plNotReady))
		},
		upgrade: []string{"p0"},
	}, {
		name: "an updated pod whose sidecar has not restarted yet counts against maxUnavailable",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("2") },
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 4), plLagging(t, plPod(t, "u", plV1()), plV2()))
		},
		upgrade: []string{"p0"},
	}, {
		name: "an updated pod ready does not count",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("2") },
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 4), plPod(t, "u", plV2()))
		},
		upgrade: []string{"p0", "p1"},
	}, {
		name: "an old pod not ready does not count",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("2") },
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 4), plPod(t, "w", plWider(), plNotReady))
		},
		upgrade:       []string{"p0", "p1"},
		notUpgradable: []string{"w"},
	}, {
		name: "maxUnavailable used up",
		set:  func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.MaxUnavailable = ios("2") },
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 4), plPod(t, "u0", plV2(), plNotReady), plPod(t, "u1", plV2(), plPending))
		},
		why: "maxUnavailable",
	}, {
		name: "pods not running are taken without cost",
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 2), plPod(t, "x-not-ready", plV1(), plNotReady), plPod(t, "y-pending", plV1(), plPending))
		},
		upgrade: []string{"y-pending", "x-not-ready", "p0"},
	}, {
		name: "pods not running are taken even with maxUnavailable used up",
		pods: func(t *testing.T) []*corev1.Pod {
			return append(plOld(t, 2), plPod(t, "x-not-ready", plV1(), plNotReady), plPod(t, "u", plV2(), plNotReady))
		},
		upgrade: []string{"x-not-ready"},
	}, {
		name: "a pod not running waits behind a running pod maxUnavailable holds back",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
				{Weight: 10, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}}}
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "gold", plV1(), plLabel("tier", "gold")), plPod(t, "not-ready", plV1(), plNotReady),
				plPod(t, "u", plV2(), plNotReady)}
		},
		why: "maxUnavailable",
	}, {
		name: "a pod not running behind a running pod that goes",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
				{Weight: 10, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}}}
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV1()), plPod(t, "gold", plV1(), plLabel("tier", "gold")), plPod(t, "not-ready", plV1(), plNotReady)}
		},
		upgrade: []string{"gold", "not-ready"},
	}, {
		name: "partition keeps the last pods of the update order",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ios("1")
			s.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
			s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
				{Weight: 10, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}}}
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV1()), plPod(t, "b", plV1()), plPod(t, "c", plV1(), plLabel("tier", "gold"))}
		},
		upgrade: []string{"c", "a"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := plV2()
			if tc.set != nil {
				tc.set(set)
			}
			pods := tc.pods(t)
			before := make([]*corev1.Pod, len(pods))
			for i, p := range pods {
				before[i] = p.DeepCopy()
			}
			plan := planner.Compute(set, pods, "mesh-rev", 0)
			if got := plNames(plan.Upgrade); !slices.Equal(got, nonNil(tc.upgrade)) {
				t.Errorf("Upgrade = %v, want %v", got, tc.upgrade)
			}
			if got := plNames(plan.NotUpgradable); !slices.Equal(got, nonNil(tc.notUpgradable)) {
				t.Errorf("NotUpgradable = %v, want %v", got, tc.notUpgradable)
			}
			switch {
			case tc.why == "" && plan.Why != "":
				t.Errorf("Why = %q, want none", plan.Why)
			case tc.why != "" && !strings.Contains(plan.Why, tc.why):
				t.Errorf("Why = %q, want it to mention %q", plan.Why, tc.why)
			}
			if !slices.Equal(plKeys(pods), plKeys(before)) {
				t.Errorf("Compute reordered its input pods: %v, was %v", plKeys(pods), plKeys(before))
			}
			for i := range pods {
				if !equality.Semantic.DeepEqual(pods[i], before[i]) {
					t.Errorf("Compute modified pod %s", pods[i].Name)
				}
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestComputePercentAsOpenKruise: percentages as OpenKruise v1.9.0 scales them. Its
// calculateUpgradeCount takes the partition from util.CalculatePartitionReplicas (rounded up,
// clamped to the matched pods, and one pod less than all of them for a percentage below 100% with
// more than one pod) and maxUnavailable from GetValueFromIntOrPercent(…, roundUp=true) — rounded up
// since openkruise/kruise#1834 (v1.8.0), as the v1beta1 API documents ("Absolute number is
// calculated from percentage by rounding up"). With 5 pods and maxUnavailable 5% OpenKruise
// upgrades one pod at a time (its unit test "only maxUnavailable(5%), and pods(count=5…)" expects 1).
func TestComputePercentAsOpenKruise(t *testing.T) {
	cases := []struct {
		name                      string
		pods                      int
		partition, maxUnavailable string
		upgraded                  int
	}{
		{name: "maxUnavailable 5% of 5 pods is 1", pods: 5, maxUnavailable: "5%", upgraded: 1},
		{name: "maxUnavailable 30% of 5 pods is 2", pods: 5, maxUnavailable: "30%", upgraded: 2},
		{name: "maxUnavailable 40% of 5 pods is 2", pods: 5, maxUnavailable: "40%", upgraded: 2},
		{name: "partition 50% of 5 pods keeps 3", pods: 5, partition: "50%", maxUnavailable: "100%", upgraded: 2},
		{name: "partition 1% of 5 pods keeps 1", pods: 5, partition: "1%", maxUnavailable: "100%", upgraded: 4},
		{name: "partition 99% of 5 pods keeps 4", pods: 5, partition: "99%", maxUnavailable: "100%", upgraded: 1},
		{name: "partition 99% of 1 pod keeps it", pods: 1, partition: "99%", maxUnavailable: "100%", upgraded: 0},
		{name: "partition 20% of 5 pods keeps 1", pods: 5, partition: "20%", maxUnavailable: "100%", upgraded: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := plV2()
			if tc.partition != "" {
				set.Spec.UpdateStrategy.Partition = ios(tc.partition)
			}
			set.Spec.UpdateStrategy.MaxUnavailable = ios(tc.maxUnavailable)
			plan := planner.Compute(set, plOld(t, tc.pods), "mesh-rev", 0)
			if len(plan.Upgrade) != tc.upgraded {
				t.Errorf("upgraded %d pods (%v, why %q), want %d", len(plan.Upgrade), plNames(plan.Upgrade), plan.Why, tc.upgraded)
			}
		})
	}
}

// TestComputeOrder: the order of the upgrade — Kubernetes' ActivePods order, then
// priorityStrategy, then scatterStrategy over all the SidecarSet's pods.
func TestComputeOrder(t *testing.T) {
	weight := func(w int32, labels map[string]string) appspub.UpdatePriorityWeightTerm {
		return appspub.UpdatePriorityWeightTerm{Weight: w, MatchSelector: metav1.LabelSelector{MatchLabels: labels}}
	}
	// zoned are p0..p5 at v1, p0-p2 in zone a and p3-p5 in zone b, in the given order.
	zoned := func(t *testing.T, order ...int) []*corev1.Pod {
		var out []*corev1.Pod
		for _, i := range order {
			zone := "a"
			if i >= 3 {
				zone = "b"
			}
			out = append(out, plPod(t, "p"+string(rune('0'+i)), plV1(), plLabel("zone", zone)))
		}
		return out
	}
	cases := []struct {
		name string
		set  func(*v1beta1.SidecarSet)
		pods func(*testing.T) []*corev1.Pod
		want []string // namespace/name, in upgrade order
	}{{
		name: "ActivePods: unscheduled, pending, not ready, ready for less time, more restarts, newer, then by name",
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{
				plPod(t, "a-ready-old", plV1()),
				plPod(t, "b-ready-newer", plV1(), plCreated(plT1)),
				plPod(t, "c-ready-restarted", plV1(), plRestarts(5)),
				plPod(t, "d-ready-recently", plV1(), plReadySince(plT2)),
				plPod(t, "e-not-ready", plV1(), plNotReady),
				plPod(t, "f-pending", plV1(), plPending),
				plPod(t, "g-unscheduled", plV1(), plUnscheduled),
				plPod(t, "0-ready-old", plV1()),
			}
		},
		want: []string{"ns/g-unscheduled", "ns/f-pending", "ns/e-not-ready", "ns/d-ready-recently", "ns/c-ready-restarted",
			"ns/b-ready-newer", "ns/0-ready-old", "ns/a-ready-old"},
	}, {
		name: "ActivePods ties: by namespace, then name",
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{plPod(t, "a", plV1(), plNamespace("zz")), plPod(t, "c", plV1(), plNamespace("aa")), plPod(t, "b", plV1(), plNamespace("aa"))}
		},
		want: []string{"aa/b", "aa/c", "zz/a"},
	}, {
		name: "weightPriority: higher sum of weights first, ties in ActivePods order",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
				weight(10, map[string]string{"tier": "gold"}), weight(5, map[string]string{"zone": "x"})}}
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{
				plPod(t, "a", plV1()),
				plPod(t, "b", plV1(), plNotReady),
				plPod(t, "c", plV1(), plLabel("tier", "gold")),
				plPod(t, "d", plV1(), plLabel("tier", "gold"), plLabel("zone", "x")),
				plPod(t, "e", plV1(), plLabel("zone", "x")),
			}
		},
		want: []string{"ns/d", "ns/c", "ns/e", "ns/b", "ns/a"},
	}, {
		name: "orderPriority: pods without the keys first, then by the first key, higher trailing number first",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{OrderPriority: []appspub.UpdatePriorityOrderTerm{
				{OrderedKey: "rank"}, {OrderedKey: "prio"}}}
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{
				plPod(t, "a", plV1(), plLabel("rank", "r-2")),
				plPod(t, "b", plV1(), plLabel("rank", "r-10")),
				plPod(t, "c", plV1()),
				plPod(t, "d", plV1(), plLabel("rank", "r-1"), plLabel("prio", "p-99")),
				plPod(t, "e", plV1(), plLabel("prio", "p-9")),
			}
		},
		want: []string{"ns/c", "ns/b", "ns/a", "ns/d", "ns/e"},
	}, {
		name: "scatter: one term, spread by the density of all the SidecarSet's pods (an updated one too)",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Key: "zone", Value: "a"}}
		},
		pods: func(t *testing.T) []*corev1.Pod {
			return append(zoned(t, 0, 1, 2, 3, 4, 5), plPod(t, "u0", plV2(), plLabel("zone", "a")))
		},
		want: []string{"ns/p3", "ns/p0", "ns/p4", "ns/p1", "ns/p5", "ns/p2"},
	}, {
		name: "scatter: one term, only the waiting pods",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Key: "zone", Value: "a"}}
		},
		pods: func(t *testing.T) []*corev1.Pod { return zoned(t, 0, 1, 2, 3, 4, 5) },
		want: []string{"ns/p0", "ns/p3", "ns/p4", "ns/p1", "ns/p5", "ns/p2"},
	}, {
		name: `scatter: "*" stands for each value, in the order the pods carry them`,
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Key: "zone", Value: "*"}}
		},
		pods: func(t *testing.T) []*corev1.Pod { return zoned(t, 0, 1, 2, 3, 4, 5) },
		want: []string{"ns/p3", "ns/p0", "ns/p1", "ns/p4", "ns/p2", "ns/p5"},
	}, {
		name: `scatter: "*" with zone b met first`,
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Key: "zone", Value: "*"}}
		},
		pods: func(t *testing.T) []*corev1.Pod { return zoned(t, 3, 4, 5, 0, 1, 2) },
		want: []string{"ns/p0", "ns/p3", "ns/p4", "ns/p1", "ns/p5", "ns/p2"},
	}, {
		name: "scatter after priority",
		set: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.PriorityStrategy = &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
				weight(10, map[string]string{"first": "yes"})}}
			s.Spec.UpdateStrategy.ScatterStrategy = v1beta1.SidecarSetUpdateScatterStrategy{{Key: "zone", Value: "a"}}
		},
		// Priority gives p2 p5 p0 p1 p3 p4; spreading zone a (p2 p0 | p1 last) over the others
		// (p5 p3 p4): p2 p5 p3, p0 p4, p1.
		pods: func(t *testing.T) []*corev1.Pod {
			pods := zoned(t, 0, 1, 2, 3, 4, 5)
			pods[2].Labels["first"], pods[5].Labels["first"] = "yes", "yes"
			return pods
		},
		want: []string{"ns/p2", "ns/p5", "ns/p3", "ns/p0", "ns/p4", "ns/p1"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := plV2()
			set.Spec.UpdateStrategy.MaxUnavailable = ios("100%")
			if tc.set != nil {
				tc.set(set)
			}
			plan := planner.Compute(set, tc.pods(t), "mesh-rev", 0)
			if got := plKeys(plan.Upgrade); !slices.Equal(got, tc.want) {
				t.Errorf("upgrade order = %v\nwant          %v", got, tc.want)
			}
		})
	}
}

// plHot is the SidecarSet "mesh" (generation 7) selecting app=web, with the hot-upgrade sidecar
// "envoy" on image (empty image "empty:1") at resourceVersion rv.
func plHot(image, rv string) *v1beta1.SidecarSet {
	return plSet("x", func(s *v1beta1.SidecarSet) {
		s.ResourceVersion = rv
		s.Spec.Containers = []v1beta1.SidecarSetContainer{{Container: corev1.Container{Name: "envoy", Image: image},
			PodInjectPolicy: v1beta1.SidecarSetBeforeAppContainer,
			UpgradeStrategy: v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: "empty:1"}}}
	})
}

// plWritten is pod after write (sidecarrules.PlanFullUpgrade or sidecarrules.PlanFlip at plT1) was patched in.
func plWritten(t *testing.T, pod *corev1.Pod, set *v1beta1.SidecarSet, write func(*corev1.Pod, *v1beta1.SidecarSet, metav1.Time) (*sidecarrules.Upgrade, error)) *corev1.Pod {
	t.Helper()
	up, err := write(pod, set, plT1)
	if err != nil || up == nil {
		t.Fatalf("plan for pod %s: %+v, %v", pod.Name, up, err)
	}
	return sidecarrules.Patched(pod, up)
}

// plKubelet is pod after the kubelet restarted each container whose spec image it does not run.
func plKubelet(pod *corev1.Pod) *corev1.Pod {
	out := pod.DeepCopy()
	for i := range out.Status.ContainerStatuses {
		cs := &out.Status.ContainerStatuses[i]
		for _, c := range out.Spec.Containers {
			if c.Name == cs.Name && c.Image != cs.Image {
				cs.Image, cs.ImageID, cs.Ready = c.Image, "id-"+c.Image, true
			}
		}
	}
	return out
}

// TestComputeHotUpgrade: the hot upgrade in the plan — the pods to flip (OpenKruise's step before
// its update strategy checks), the status counts and maxUnavailable while copies are swapped.
func TestComputeHotUpgrade(t *testing.T) {
	v1, v2, v3 := plHot("envoy:1", "10"), plHot("envoy:2", "20"), plHot("envoy:3", "30")
	// The stages of one pod's hot upgrade to v2.
	injected := func(t *testing.T, name string, opts ...plOpt) *corev1.Pod { return plPod(t, name, v1, opts...) }
	upgraded := func(t *testing.T, name string) *corev1.Pod { // envoy-2 on envoy:2, not restarted yet
		return plWritten(t, injected(t, name), v2, sidecarrules.PlanFullUpgrade)
	}
	handedOver := func(t *testing.T, name string) *corev1.Pod { // both copies run: the flip is due
		return plKubelet(upgraded(t, name))
	}
	flipped := func(t *testing.T, name string) *corev1.Pod { // envoy-1 set to empty, not restarted yet
		return plWritten(t, handedOver(t, name), v2, sidecarrules.PlanFlip)
	}
	done := func(t *testing.T, name string) *corev1.Pod { return plKubelet(flipped(t, name)) }

	cases := []struct {
		name                           string
		set                            *v1beta1.SidecarSet
		strategy                       func(*v1beta1.SidecarSet)
		pods                           func(*testing.T) []*corev1.Pod
		flip, upgrade                  []string
		matched, updated, ready, upRdy int32
	}{{
		name: "each stage: updated from the upgrade on, ready only once the old copy runs the empty image",
		set:  v2,
		pods: func(t *testing.T) []*corev1.Pod {
			return []*corev1.Pod{injected(t, "a"), upgraded(t, "b"), handedOver(t, "c"), flipped(t, "d"), done(t, "e")}
		},
		// b, c and d are updated and not ready: maxUnavailable (1) is used up.
		flip:    []string{"c"},
		matched: 5, updated: 4, ready: 2, upRdy: 1,
	}, {
		name: "flips go on with NotUpdate",
		set:  v2, strategy: func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.Type = v1beta1.SidecarSetNotUpdateStrategy },
		pods: func(t *testing.T) []*corev1.Pod { return []*corev1.Pod{injected(t, "a"), handedOver(t, "c")} },
		flip: []string{"c"}, matched: 2, updated: 1, ready: 1,
	}, {
		name: "flips go on while paused",
		set:  v2, strategy: func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.Paused = true },
		pods: func(t *testing.T) []*corev1.Pod { return []*corev1.Pod{injected(t, "a"), handedOver(t, "c")} },
		flip: []string{"c"}, matched: 2, updated: 1, ready: 1,
	}, {
		name: "flips go on when every pod is updated",
		set:  v2,
		pods: func(t *testing.T) []*corev1.Pod { return []*corev1.Pod{handedOver(t, "c"), done(t, "e")} },
		flip: []string{"c"}, matched: 2, updated: 2, ready: 1, upRdy: 1,
	}, {
		name: "flips go on for pods updateStrategy.selector leaves out and the partition keeps",
		set:  v2,
		strategy: func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
			s.Spec.UpdateStrategy.Partition = ios("100%")
		},
		pods: func(t *testing.T) []*corev1.Pod { return []*corev1.Pod{injected(t, "a"), handedOver(t, "c")} },
		flip: []string{"c"}, matched: 2, updated: 1, ready: 1,
	}, {
		name: "a pod mid-way, not flipped yet, costs nothing and goes when not updated: flipped, then upgraded",
		set:  v3,
		pods: func(t *testing.T) []*corev1.Pod { return []*corev1.Pod{done(t, "e"), handedOver(t, "c")} },
		flip: []string{"c"}, upgrade: []string{"c", "e"}, matched: 2, ready: 1,
	}, {
		name:    "a pod whose flip the kubelet has not carried out is in flight: skipped",
		set:     v3,
		pods:    func(t *testing.T) []*corev1.Pod { return []*corev1.Pod{flipped(t, "d"), injected(t, "a")} },
		upgrade: []string{"a"}, matched: 2, ready: 1,
	}, {
		name:    "a pod hot-upgraded and flipped is upgraded again: back to the first copy",
		set:     v3,
		pods:    func(t *testing.T) []*corev1.Pod { return []*corev1.Pod{done(t, "e")} },
		upgrade: []string{"e"}, matched: 1, ready: 1,
	}, {
		name: "a pod whose new copy does not start (a bad image) is not flipped; counted unavailable",
		set:  v2,
		pods: func(t *testing.T) []*corev1.Pod {
			p := upgraded(t, "b")
			for i := range p.Status.ContainerStatuses {
				if p.Status.ContainerStatuses[i].Name == "envoy-2" {
					p.Status.ContainerStatuses[i].Ready = false
				}
			}
			p.Status.Conditions[0].Status = corev1.ConditionFalse
			return []*corev1.Pod{p, injected(t, "a")}
		},
		matched: 2, updated: 1, ready: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.set.DeepCopy()
			if tc.strategy != nil {
				tc.strategy(set)
			}
			pods := tc.pods(t)
			plan := planner.Compute(set, pods, "mesh-rev", 0)
			if got := plNames(plan.Flip); !slices.Equal(got, nonNil(tc.flip)) {
				t.Errorf("Flip = %v, want %v", got, tc.flip)
			}
			if got := plNames(plan.Upgrade); !slices.Equal(got, nonNil(tc.upgrade)) {
				t.Errorf("Upgrade = %v, want %v (why %q)", got, tc.upgrade, plan.Why)
			}
			st := plan.Status
			if st.MatchedPods != tc.matched || st.UpdatedPods != tc.updated || st.ReadyPods != tc.ready || st.UpdatedReadyPods != tc.upRdy {
				t.Errorf("matched/updated/ready/updatedReady = %d/%d/%d/%d, want %d/%d/%d/%d", st.MatchedPods, st.UpdatedPods,
					st.ReadyPods, st.UpdatedReadyPods, tc.matched, tc.updated, tc.ready, tc.upRdy)
			}
		})
	}
}
