package cli

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/controller/statefulset"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// forecastStatefulSet runs the Advanced StatefulSet planner (statefulset.Compute) forward from
// snap, as cloneset.Forecast does for CloneSets: every pod a step creates or updates comes back
// running and ready (available minReadySeconds later), every pod it deletes is gone, and nothing
// else changes; when the planner only waits for time to pass (minReadySeconds, a grace period),
// time moves on to its deadline. It returns at most max steps, the last one saying what the
// rollout then waits for (hooks, pause, partition, InPlaceOnly refusals).
func forecastStatefulSet(snap *statefulset.Snapshot, now time.Time, max int) []forecastStep {
	s := *snap
	s.Pods = slices.Clone(snap.Pods)
	minReady := time.Duration(0)
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		minReady = time.Duration(ptr.Deref(ru.MinReadySeconds, 0)) * time.Second
	}
	var steps []forecastStep
	for round := 0; len(steps) < max && round < 4*max; round++ {
		p := statefulset.Compute(&s, now)
		actions := statefulSetActions(s.Name, p)
		if len(actions) == 0 {
			if !p.Next.IsZero() {
				now = p.Next // only time is waited for
				continue
			}
			waits := p.Notes
			for _, r := range p.Refusals {
				waits = append(waits, r.Pod+": "+r.Reason)
			}
			if len(steps) > 0 || len(waits) > 0 {
				steps = append(steps, forecastStep{waits: waits})
			}
			break
		}
		steps = append(steps, forecastStep{actions: actions})
		advanceStatefulSet(&s, p, now)
		now = now.Add(minReady + time.Second)
	}
	return steps
}

// statefulSetActions are the lines of set's plan p.
func statefulSetActions(set string, p statefulset.Plan) []forecastAction {
	out, moved := resumeAndMoveActions(p.Resumes, p.Lifecycle)
	for _, c := range p.Creates {
		out = append(out, forecastAction{"create", fmt.Sprintf("%s at %s: %s", ordinal.PodName(set, c.Ordinal), c.Revision, c.Reason)})
	}
	for _, d := range p.Deletes {
		out = append(out, forecastAction{"delete", d.Pod + ": " + d.Reason})
	}
	for _, u := range p.Updates {
		how := "in place"
		if u.Mode == statefulset.UpdateRecreate {
			how = "recreate"
		}
		out = append(out, forecastAction{how, u.Pod + ": " + u.Reason})
	}
	return append(out, moved...)
}

// advanceStatefulSet carries p out on s as the step's pods would end: created and updated pods
// running and ready at now, deleted and recreated ones gone (a later plan creates the latter
// again), lifecycle moves made.
func advanceStatefulSet(s *statefulset.Snapshot, p statefulset.Plan, now time.Time) {
	byName := map[string]*statefulset.PodFacts{}
	for i := range s.Pods {
		byName[s.Pods[i].Name] = &s.Pods[i]
	}
	ready := func(pod *statefulset.PodFacts) {
		pod.Phase, pod.Ready, pod.ReadySince = corev1.PodRunning, true, now
		pod.InPlaceUpdating, pod.GraceDue = false, time.Time{}
	}
	gone := map[string]bool{}
	for _, d := range p.Deletes {
		gone[d.Pod] = true
	}
	for _, name := range p.Resumes {
		ready(byName[name])
	}
	for _, u := range p.Updates {
		pod := byName[u.Pod]
		if u.Mode == statefulset.UpdateRecreate {
			gone[u.Pod] = true
			continue
		}
		pod.Revision = s.UpdateRevision
		if pod.Lifecycle == appspub.LifecycleStatePreparingUpdate {
			pod.Lifecycle = lifecycle.AfterUpdate(pod.UpdatedReleased)
		}
		ready(pod)
	}
	for _, m := range p.Lifecycle {
		if pod := byName[m.Pod]; pod != nil {
			pod.Lifecycle = m.To
		}
	}
	s.Pods = slices.DeleteFunc(s.Pods, func(f statefulset.PodFacts) bool { return gone[f.Name] })
	for _, c := range p.Creates {
		pod := statefulset.PodFacts{Name: ordinal.PodName(s.Name, c.Ordinal), Ordinal: c.Ordinal, Revision: c.Revision,
			State: podcontrol.State{PreNormalReleased: true, UpdatedReleased: true}}
		ready(&pod)
		s.Pods = append(s.Pods, pod)
	}
	slices.SortFunc(s.Pods, func(a, b statefulset.PodFacts) int { return a.Ordinal - b.Ordinal })
}
