package containerlaunchpriority

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
)

// barrierPod is a pod as the webhook leaves it, its containers c0, c1, ... of the given priorities
// (nil: no barrier env), ready as listed.
func barrierPod(prios []*int, ready ...bool) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1", Annotations: map[string]string{}}}
	for i, p := range prios {
		c := corev1.Container{Name: "c" + string(rune('0'+i))}
		if p != nil {
			c.Env = []corev1.EnvVar{podmutation.BarrierEnv(pod.Name, *p)}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Ready: i < len(ready) && ready[i]})
	}
	return pod
}

func ints(v ...int) []*int {
	out := make([]*int, len(v))
	for i := range v {
		out[i] = &v[i]
	}
	return out
}

func keys(k ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range k {
		out[s] = true
	}
	return out
}

func TestPlanPod(t *testing.T) {
	owned := func(k ...string) Barrier { return Barrier{Exists: true, OwnerUID: "uid-1", Keys: keys(k...)} }
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		barrier  Barrier
		create   bool
		release  string
		complete bool
		blocked  bool
		recreate bool
	}{
		{"no barrier env: nothing", barrierPod([]*int{nil, nil}), Barrier{}, false, "", false, false, false},
		{"new pod: barrier created with the highest key", barrierPod(ints(0, -1, -2)), Barrier{}, true, "p_0", false, false, false},
		{"empty barrier (OpenKruise made it): highest key", barrierPod(ints(0, 1)), owned(), false, "p_1", false, false, false},
		{"highest not ready yet: wait", barrierPod(ints(0, -1, -2)), owned("p_0"), false, "", false, false, false},
		{"highest ready: next", barrierPod(ints(0, -1, -2), true), owned("p_0"), false, "p_-1", false, false, false},
		{"last one: released and completed", barrierPod(ints(0, -1, -2), true, true), owned("p_0", "p_-1"), false, "p_-2", true, false, false},
		{"same priority: all must be ready", barrierPod(ints(5, 5, 1), true, false), owned("p_5"), false, "", false, false, false},
		{"same priority all ready: next", barrierPod(ints(5, 5, 1), true, true), owned("p_5"), false, "p_1", true, false, false},
		{"a released container unready again: nothing new", barrierPod(ints(0, -1, -2), false, true), owned("p_0", "p_-1"), false, "", false, false, false},
		{"all ready, lowest already there: completed", barrierPod(ints(1, 0), true, true), owned("p_1", "p_0"), false, "", true, false, false},
		{"barrier deleted mid-way: recreated with what was released", barrierPod(ints(2, 1, 0), true, false), Barrier{}, true, "p_2,p_1", false, false, false},
		{"completed pod, barrier deleted: recreated with every key", completed(barrierPod(ints(1, 0), true, true)), Barrier{}, true, "p_1,p_0", false, false, false},
		{"completed pod, barrier there: nothing", completed(barrierPod(ints(1, 0))), owned("p_1", "p_0"), false, "", false, false, false},
		{"someone else's ConfigMap: left alone", barrierPod(ints(1, 0)), Barrier{Exists: true, Keys: keys()}, false, "", false, true, false},
		{"an earlier pod's barrier: replaced", barrierPod(ints(1, 0)), Barrier{Exists: true, OwnerUID: "uid-0", Keys: keys("p_1", "p_0")}, false, "", false, false, true},
		{"containers without status yet count as not ready", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "uid-1"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "a", Env: []corev1.EnvVar{podmutation.BarrierEnv("p", 3)}},
				{Name: "b", Env: []corev1.EnvVar{podmutation.BarrierEnv("p", 7)}}}}}, Barrier{}, true, "p_7", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanPod(tc.pod, tc.barrier)
			if got.Create != tc.create || strings.Join(got.Release, ",") != tc.release || got.Complete != tc.complete ||
				got.Blocked != tc.blocked || got.Recreate != tc.recreate {
				t.Errorf("plan %+v; want create %v release %q complete %v blocked %v recreate %v", got, tc.create, tc.release, tc.complete, tc.blocked, tc.recreate)
			}
		})
	}
}

func completed(pod *corev1.Pod) *corev1.Pod {
	pod.Annotations[appspub.ContainerLaunchPriorityCompletedKey] = "true"
	return pod
}

func TestDue(t *testing.T) {
	pod := barrierPod(ints(1, 0))
	if !Due(pod) {
		t.Fatal("a new pod with a barrier is due")
	}
	if Due(barrierPod([]*int{nil, nil})) {
		t.Error("a pod without a barrier is not due")
	}
	ready := barrierPod(ints(1, 0))
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}
	if Due(ready) {
		t.Error("a pod whose containers are ready is not due")
	}
	if Due(completed(barrierPod(ints(1, 0)))) {
		t.Error("a completed pod is not due")
	}
}

// TestLaunchSequence simulates a kubelet that starts a container only once its key is in the
// barrier and makes it ready some steps later, in a seeded random order, with the controller's
// plans applied in between (and the barrier deleted now and then). Invariant: a key is released
// only while every container of a higher priority is ready; in the end every container runs and
// the pod is completed.
func TestLaunchSequence(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		n := 2 + rng.Intn(5)
		prios := make([]int, n)
		for i := range prios {
			prios[i] = rng.Intn(4) - 2
		}
		pod := barrierPod(ints(prios...))
		b := Barrier{}
		started := make([]bool, n)
		everReleased := map[string]bool{} // a barrier recreated gets back what was released before
		for step := 0; !allReady(pod); step++ {
			if step > 5000 {
				t.Fatalf("seed %d: priorities %v never all ready; barrier %v", seed, prios, b.Keys)
			}
			switch rng.Intn(4) {
			case 0: // the controller
				plan := PlanPod(pod, b)
				for _, k := range plan.Release {
					released, _ := strconv.Atoi(strings.TrimPrefix(k, appspub.BarrierKeyPrefix))
					for i, p := range prios {
						if p > released && !pod.Status.ContainerStatuses[i].Ready && !everReleased[k] {
							t.Fatalf("seed %d: %s released while c%d (priority %d) is not ready", seed, k, i, p)
						}
					}
				}
				if plan.Create {
					b = Barrier{Exists: true, OwnerUID: pod.UID, Keys: map[string]bool{}}
				}
				for _, k := range plan.Release {
					b.Keys[k], everReleased[k] = true, true
				}
				if plan.Complete {
					pod.Annotations[appspub.ContainerLaunchPriorityCompletedKey] = "true"
				}
			case 1: // the kubelet starts a container whose key is there
				if i := rng.Intn(n); b.Keys[Key(prios[i])] {
					started[i] = true
				}
			case 2: // a started container becomes ready
				if i := rng.Intn(n); started[i] {
					pod.Status.ContainerStatuses[i].Ready = true
				}
			case 3:
				if rng.Intn(20) == 0 { // the barrier is deleted
					b = Barrier{}
				}
			}
		}
		if !allReady(pod) {
			t.Fatalf("seed %d: priorities %v: not all ready; barrier %v", seed, prios, b.Keys)
		}
	}
}

func allReady(pod *corev1.Pod) bool {
	for _, s := range pod.Status.ContainerStatuses {
		if !s.Ready {
			return false
		}
	}
	return true
}
