package daemonset

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
)

func createdOn(p Plan) []string {
	var out []string
	for _, c := range p.Creates {
		out = append(out, c.Node)
	}
	return out
}

func deleted(p Plan) []string {
	var out []string
	for _, d := range p.Deletes {
		out = append(out, d.Pod)
	}
	return out
}

func updated(p Plan, mode UpdateMode) []string {
	var out []string
	for _, u := range p.Updates {
		if u.Mode == mode {
			out = append(out, u.Pod)
		}
	}
	return out
}

func TestManage(t *testing.T) {
	t.Run("every eligible node without a pod gets one", func(t *testing.T) {
		ns := nodes(3, "")
		ns[1].Verdict = nodeeligibility.Verdict{Reason: "selector"}
		p := Compute(snapshot(spec(nil), ns), t0)
		if got := createdOn(p); !slices.Equal(got, []string{"n0", "n2"}) {
			t.Fatalf("created on %v", got)
		}
	})
	t.Run("a NoSchedule taint keeps the pod, a NoExecute one removes it", func(t *testing.T) {
		ns := nodes(2, revNew)
		ns[0].Verdict = nodeeligibility.Verdict{Continue: true, Reason: "taint NoSchedule"}
		ns[1].Verdict = nodeeligibility.Verdict{Reason: "taint NoExecute"}
		p := Compute(snapshot(spec(nil), ns), t0)
		if got := deleted(p); !slices.Equal(got, []string{ns[1].Pods[0].Name}) || len(p.Creates) > 0 {
			t.Fatalf("deleted %v, created %v", got, createdOn(p))
		}
		st := ComputeStatus(snapshot(spec(nil), ns), t0, v1beta1.DaemonSetStatus{}, 1)
		if st.DesiredNumberScheduled != 0 || st.NumberMisscheduled != 2 {
			t.Fatalf("status %+v", st)
		}
	})
	t.Run("extra pods: the oldest is kept", func(t *testing.T) {
		ns := nodes(1, revNew)
		young := readyPod("n0", revNew)
		young.Name, young.Created = "young", t0.Add(time.Minute)
		ns[0].Pods = append(ns[0].Pods, young)
		if got := deleted(Compute(snapshot(spec(nil), ns), t0)); !slices.Equal(got, []string{"young"}) {
			t.Fatalf("deleted %v", got)
		}
	})
	t.Run("a failed pod is replaced after its node's back-off", func(t *testing.T) {
		ns := nodes(1, revNew)
		ns[0].Pods[0].Phase = corev1.PodFailed
		ns[0].BackoffUntil = t0.Add(4 * time.Second)
		p := Compute(snapshot(spec(nil), ns), t0)
		if len(p.Deletes)+len(p.Creates) != 0 || !p.Next.Equal(ns[0].BackoffUntil) {
			t.Fatalf("during back-off: %+v", p)
		}
		p = Compute(snapshot(spec(nil), ns), t0.Add(5*time.Second))
		if len(p.Deletes) != 1 || !p.Deletes[0].Failed || len(p.Creates) != 0 {
			t.Fatalf("after back-off: %+v", p)
		}
	})
	t.Run("a pod ready for less than minReadySeconds wakes the plan when it becomes available", func(t *testing.T) {
		s := spec(nil)
		s.MinReadySeconds = 5
		ns := nodes(1, revNew)
		ns[0].Pods[0].ReadySince = t0.Add(-time.Second)
		if p := Compute(snapshot(s, ns), t0); !p.Next.Equal(t0.Add(4 * time.Second)) {
			t.Fatalf("next %v", p.Next)
		}
	})
	t.Run("pods of gone nodes are deleted", func(t *testing.T) {
		s := snapshot(spec(nil), nodes(1, revNew))
		s.Strays = []PodFacts{readyPod("gone", revNew)}
		if got := deleted(Compute(s, t0)); !slices.Equal(got, []string{"p-gone-ds-new"}) {
			t.Fatalf("deleted %v", got)
		}
	})
	t.Run("burstReplicas bounds the creates", func(t *testing.T) {
		s := spec(nil)
		s.BurstReplicas = intOrStr("2")
		p := Compute(snapshot(s, nodes(5, "")), t0)
		if len(p.Creates) != 2 || !strings.Contains(strings.Join(p.Notes, ";"), "burstReplicas") {
			t.Fatalf("creates %v notes %v", createdOn(p), p.Notes)
		}
	})
	t.Run("partitionedScaling: at most desired - partition nodes get a pod", func(t *testing.T) {
		s := spec(func(ru *v1beta1.DaemonSetRollingUpdate) { ru.Partition = intOrStr("3") })
		s.ScaleStrategy = &v1beta1.DaemonSetScaleStrategy{PartitionedScaling: true}
		ns := nodes(5, "")
		ns[0].Pods = []PodFacts{readyPod("n0", revNew)}
		if got := createdOn(Compute(snapshot(s, ns), t0)); len(got) != 1 {
			t.Fatalf("created on %v, want 1 node", got)
		}
	})
	t.Run("preDelete holds a misscheduled pod", func(t *testing.T) {
		s := spec(nil)
		s.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"x/y"}}}
		ns := nodes(1, revNew)
		ns[0].Verdict = nodeeligibility.Verdict{Reason: "gone"}
		ns[0].Pods[0].PreDeleteHeld = true
		p := Compute(snapshot(s, ns), t0)
		if len(p.Deletes) != 0 || len(p.Lifecycle) != 1 || p.Lifecycle[0].To != appspub.LifecycleStatePreparingDelete {
			t.Fatalf("plan %+v", p)
		}
	})
}

func TestRollingUpdate(t *testing.T) {
	inPlace := func(ru *v1beta1.DaemonSetRollingUpdate) { ru.Type = v1beta1.DaemonSetInplaceRollingUpdateType }
	t.Run("maxUnavailable 1: one node at a time, from the highest name", func(t *testing.T) {
		p := Compute(snapshot(spec(nil), nodes(3, revOld)), t0)
		if got := updated(p, UpdateRecreate); !slices.Equal(got, []string{"p-n2-ds-old"}) {
			t.Fatalf("recreated %v", got)
		}
	})
	t.Run("InPlaceIfPossible updates in place", func(t *testing.T) {
		p := Compute(snapshot(spec(inPlace), nodes(3, revOld)), t0)
		if got := updated(p, UpdateInPlace); !slices.Equal(got, []string{"p-n2-ds-old"}) {
			t.Fatalf("in place %v", got)
		}
	})
	t.Run("InPlaceIfPossible recreates what cannot change in place", func(t *testing.T) {
		s := snapshot(spec(inPlace), nodes(1, revOld))
		delete(s.InPlace, revOld)
		if got := updated(Compute(s, t0), UpdateRecreate); len(got) != 1 {
			t.Fatalf("recreated %v", got)
		}
	})
	t.Run("unavailable old pods are updated at no cost", func(t *testing.T) {
		ns := nodes(4, revOld)
		ns[0].Pods[0].Ready = false
		p := Compute(snapshot(spec(nil), ns), t0)
		if got := updated(p, UpdateRecreate); !slices.Equal(got, []string{"p-n0-ds-old"}) {
			t.Fatalf("recreated %v (the unavailable pod takes the budget's only slot)", got)
		}
	})
	t.Run("an unavailable pod on a node no new pod goes to (unreachable) still takes the budget", func(t *testing.T) {
		ns := nodes(4, revOld)
		ns[0].Verdict.Run = false
		ns[0].Pods[0].Ready = false
		p := Compute(snapshot(spec(nil), ns), t0)
		if got := updated(p, UpdateRecreate); len(got) > 1 || (len(got) == 1 && got[0] != "p-n0-ds-old") {
			t.Fatalf("recreated %v: an available pod went while n0's was unavailable", got)
		}
	})
	t.Run("partition keeps the lowest names old", func(t *testing.T) {
		ns := nodes(4, revOld)
		ns[3].Pods = []PodFacts{readyPod("n3", revNew)}
		s := spec(func(ru *v1beta1.DaemonSetRollingUpdate) {
			ru.Partition = intOrStr("2")
			ru.MaxUnavailable = intOrStr("100%")
		})
		if got := updated(Compute(snapshot(s, ns), t0), UpdateRecreate); !slices.Equal(got, []string{"p-n2-ds-old"}) {
			t.Fatalf("recreated %v", got)
		}
	})
	t.Run("selector: only matching nodes", func(t *testing.T) {
		ns := nodes(4, revOld)
		ns[1].Labels = map[string]string{"canary": "true"}
		s := spec(func(ru *v1beta1.DaemonSetRollingUpdate) {
			ru.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
			ru.MaxUnavailable = intOrStr("100%")
		})
		if got := updated(Compute(snapshot(s, ns), t0), UpdateRecreate); !slices.Equal(got, []string{"p-n1-ds-old"}) {
			t.Fatalf("recreated %v", got)
		}
	})
	t.Run("paused and OnDelete update nothing", func(t *testing.T) {
		s := spec(func(ru *v1beta1.DaemonSetRollingUpdate) { ru.Paused = ptr.To(true) })
		if p := Compute(snapshot(s, nodes(2, revOld)), t0); len(p.Updates) != 0 {
			t.Fatalf("paused: %+v", p.Updates)
		}
		s = spec(nil)
		s.UpdateStrategy = v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetOnDeleteStrategyType}
		if p := Compute(snapshot(s, nodes(2, revOld)), t0); len(p.Updates) != 0 {
			t.Fatalf("OnDelete: %+v", p.Updates)
		}
	})
	t.Run("surge creates beside the old pod, deletes it once the new one is available", func(t *testing.T) {
		s := spec(func(ru *v1beta1.DaemonSetRollingUpdate) {
			ru.MaxSurge = intOrStr("1")
			ru.MaxUnavailable = intOrStr("0")
		})
		ns := nodes(3, revOld)
		p := Compute(snapshot(s, ns), t0)
		if got := createdOn(p); !slices.Equal(got, []string{"n2"}) || len(p.Updates)+len(p.Deletes) != 0 {
			t.Fatalf("first step: creates %v, %+v", got, p)
		}
		fresh := readyPod("n2", revNew)
		fresh.Ready, fresh.Created = false, t0.Add(time.Second)
		ns[2].Pods = append(ns[2].Pods, fresh)
		if p := Compute(snapshot(s, ns), t0); len(p.Creates)+len(p.Deletes) != 0 {
			t.Fatalf("while the new pod starts: %+v", p)
		}
		ns[2].Pods[1].Ready = true
		p = Compute(snapshot(s, ns), t0)
		if got := deleted(p); !slices.Equal(got, []string{"p-n2-ds-old"}) {
			t.Fatalf("once available: deleted %v", got)
		}
	})
	t.Run("minReadySeconds delays availability and wakes the plan", func(t *testing.T) {
		s := spec(nil)
		s.MinReadySeconds = 30
		ns := nodes(2, revOld)
		ns[1].Pods = []PodFacts{readyPod("n1", revNew)}
		ns[1].Pods[0].ReadySince = t0.Add(-10 * time.Second)
		p := Compute(snapshot(s, ns), t0)
		if len(p.Updates) != 0 || !p.Next.Equal(t0.Add(20*time.Second)) {
			t.Fatalf("plan %+v", p)
		}
	})
}

// kruise#1871: a node taken out of rollingUpdate.selector goes back to the current revision, in
// place where it can, else recreated there; with KeepUnselected (no CurrentRevision) it stays.
func TestRollBackUnselected(t *testing.T) {
	canary := func(ru *v1beta1.DaemonSetRollingUpdate) {
		ru.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
		ru.Type = v1beta1.DaemonSetInplaceRollingUpdateType
	}
	ns := nodes(3, revOld)
	ns[2].Pods = []PodFacts{readyPod("n2", revNew)}
	s := snapshot(spec(canary), ns)
	s.CurrentRevision, s.RollBack = revOld, inplace.Decision{Spec: &inplace.UpdateSpec{Revision: revOld}}
	p := Compute(s, t0)
	if len(p.Updates) != 1 || p.Updates[0].Pod != "p-n2-ds-new" || p.Updates[0].Mode != UpdateInPlace || p.Updates[0].Spec.Revision != revOld {
		t.Fatalf("updates %+v", p.Updates)
	}
	s.RollBack = inplace.Decision{RecreateReasons: []string{"spec.containers[0].env"}}
	if got := updated(Compute(s, t0), UpdateRecreate); !slices.Equal(got, []string{"p-n2-ds-new"}) {
		t.Fatalf("recreated %v", got)
	}
	ns[2].Pods = nil
	if p := Compute(snapshot(spec(canary), ns), t0); len(p.Creates) != 1 || p.Creates[0].Revision != revNew {
		t.Fatalf("without a current revision: creates %+v", p.Creates)
	}
	s = snapshot(spec(canary), ns)
	s.CurrentRevision = revOld
	if p := Compute(s, t0); len(p.Creates) != 1 || p.Creates[0].Revision != revOld {
		t.Fatalf("an unselected node's new pod: creates %+v", p.Creates)
	}
	ns[2].Pods = []PodFacts{readyPod("n2", revNew)}
	if p := Compute(snapshot(spec(canary), ns), t0); len(p.Updates) != 0 {
		t.Fatalf("KeepUnselected: updates %+v", p.Updates)
	}
}

// An invalid rollingUpdate.selector (admission refuses it; an object stored before may have one)
// updates nothing and says why.
func TestInvalidSelectorUpdatesNothing(t *testing.T) {
	s := spec(func(ru *v1beta1.DaemonSetRollingUpdate) {
		ru.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
	})
	p := Compute(snapshot(s, nodes(2, revOld)), t0)
	if len(p.Updates) != 0 || !strings.Contains(strings.Join(p.Notes, ";"), "selector is invalid") {
		t.Fatalf("plan %+v", p)
	}
}
