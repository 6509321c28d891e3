package sandbox

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// The no-rewrite profile is the rewriting one without kruise-pod-ready-rewrite, every other stage
// the same document.
func TestNoReadyRewriteProfileLacksOnlyTheRewriteStage(t *testing.T) {
	rewrite, silent := loadProfileStages(t, NodeProfile{}), loadProfileStages(t, NodeProfile{NoReadyRewrite: true})
	if _, ok := rewrite["kruise-pod-ready-rewrite"]; !ok {
		t.Fatal("the rewriting profile lacks kruise-pod-ready-rewrite")
	}
	if _, ok := silent["kruise-pod-ready-rewrite"]; ok {
		t.Fatal("the no-rewrite profile has kruise-pod-ready-rewrite")
	}
	want := slices.DeleteFunc(slices.Sorted(maps.Keys(rewrite)), func(n string) bool { return n == "kruise-pod-ready-rewrite" })
	if got := slices.Sorted(maps.Keys(silent)); !slices.Equal(got, want) {
		t.Errorf("no-rewrite stages %v, want %v", got, want)
	}
	for name, s := range silent {
		if fmt.Sprint(s) != fmt.Sprint(rewrite[name]) {
			t.Errorf("stage %s differs between the profiles", name)
		}
	}
}

// oldGatesSelector is kruise-pod-gates' selector before the rewrite was a stage of its own: the
// two stages of the rewriting profile together must select exactly the pods it did.
const oldGatesSelector = `([.status.containerStatuses[]? | select(.ready != true)] | length == 0) as $c | (([.spec.readinessGates[]?.conditionType] - [.status.conditions[]? | select(.status == "True") | .type]) | length == 0) as $g | (($c and $g) != ([.status.conditions[]? | select(.type == "Ready" and .status == "True")] | length > 0)) or ($c and ($g | not) and ([.status.conditions[]? | select(.type == "Ready" and .reason != "ReadinessGatesNotReady")] | length > 0))`

// gatedPods are running pods with the InPlaceUpdateReady gate: every combination of ready
// containers, the gate's condition and Ready.
func gatedPods() map[string]*corev1.Pod {
	pods := map[string]*corev1.Pod{}
	gates := map[string]*corev1.PodCondition{
		"gate True":   {Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionTrue},
		"gate False":  {Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse, Reason: "StartInPlaceUpdate"},
		"gate absent": nil,
	}
	readies := map[string]*corev1.PodCondition{
		"Ready True":                        {Type: corev1.PodReady, Status: corev1.ConditionTrue},
		"Ready False (kubelet, gates)":      {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady"},
		"Ready False (kubelet, containers)": {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"},
		"Ready False (in-place update)":     {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "StartInPlaceUpdate", Message: "rollout"},
		"Ready False (no reason)":           {Type: corev1.PodReady, Status: corev1.ConditionFalse},
		"Ready Unknown (in-place update)":   {Type: corev1.PodReady, Status: corev1.ConditionUnknown, Reason: "StartInPlaceUpdate"},
		"Ready absent":                      nil,
	}
	for _, ready := range []bool{true, false} {
		for gn, gate := range gates {
			for rn, rc := range readies {
				pod := runningPod("app:v1", corev1.RestartPolicyAlways, nil, nil)
				pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
				pod.Status.ContainerStatuses[0].Ready = ready
				conds := []corev1.PodCondition{{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}}
				if !ready {
					conds[0].Status = corev1.ConditionFalse
				}
				for _, c := range []*corev1.PodCondition{gate, rc} {
					if c != nil {
						conds = append(conds, *c)
					}
				}
				pod.Status.Conditions = conds
				pods[fmt.Sprintf("containers ready %v, %s, %s", ready, gn, rn)] = pod
			}
		}
	}
	return pods
}

// On the rewriting profile kruise-pod-gates and kruise-pod-ready-rewrite select exactly the pods the
// single stage before them did, never both one pod, and write what it wrote; on the no-rewrite
// profile a pod an in-place update took out of service (Ready False, its own reason) is left alone.
func TestReadyRewriteStageSplitsTheGatesStage(t *testing.T) {
	stages := loadStages(t)
	gatesStage, rewriteStage := stages["kruise-pod-gates"], stages["kruise-pod-ready-rewrite"]
	old := gatesStage
	old.Spec.Selector.MatchExpressions = slices.Clone(old.Spec.Selector.MatchExpressions)
	old.Spec.Selector.MatchExpressions[len(old.Spec.Selector.MatchExpressions)-1].Key = oldGatesSelector
	silent := loadProfileStages(t, NodeProfile{NoReadyRewrite: true})
	rewrites := 0
	for name, pod := range gatedPods() {
		gates, rewrite, before := matches(t, gatesStage, pod), matches(t, rewriteStage, pod), matches(t, old, pod)
		if gates && rewrite {
			t.Errorf("%s: both kruise-pod-gates and kruise-pod-ready-rewrite select it", name)
		}
		if (gates || rewrite) != before {
			t.Errorf("%s: selected by gates %v, rewrite %v; the single stage before: %v", name, gates, rewrite, before)
		}
		if !rewrite {
			continue
		}
		rewrites++
		got, was := readyOf(render(t, rewriteStage, pod)), readyOf(render(t, gatesStage, pod))
		if got.Status != corev1.ConditionFalse || got.Reason != "ReadinessGatesNotReady" || got != was {
			t.Errorf("%s: the rewrite writes Ready %s (%s: %q); the stage before wrote %s (%s: %q)", name,
				got.Status, got.Reason, got.Message, was.Status, was.Reason, was.Message)
		}
		if slices.Contains(podStagesMatching(t, silent, pod), "kruise-pod-gates") {
			t.Errorf("%s: on the no-rewrite profile kruise-pod-gates rewrites it", name)
		}
	}
	if rewrites == 0 {
		t.Fatal("no pod was rewritten")
	}
	// The engine's hold: the gate False and Ready False with its own reason.
	held := gatedPods()["containers ready true, gate False, Ready False (in-place update)"]
	if got := podStagesMatching(t, stages, held); !slices.Equal(got, []string{"kruise-pod-ready-rewrite"}) {
		t.Errorf("a held pod on the rewriting profile: stages %v, want the rewrite", got)
	}
	if got := podStagesMatching(t, silent, held); len(got) != 0 {
		t.Errorf("a held pod on the no-rewrite profile: stages %v, want none", got)
	}
	// Ready True with the gate False is the kubelet's to compute on both profiles.
	open := gatedPods()["containers ready true, gate False, Ready True"]
	for _, p := range []map[string]stage{stages, silent} {
		if got := podStagesMatching(t, p, open); !slices.Equal(got, []string{"kruise-pod-gates"}) {
			t.Errorf("gate False under Ready True: stages %v, want kruise-pod-gates", got)
		}
	}
}

func readyOf(st corev1.PodStatus) corev1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady {
			return c
		}
	}
	return corev1.PodCondition{}
}
