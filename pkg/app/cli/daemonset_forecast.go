package cli

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/controller/daemonset"
	"github.com/kruise-ng/kruise/pkg/core/lifecycle"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// forecastDaemonSet runs the Advanced DaemonSet planner (daemonset.Compute) forward from snap, as
// forecastStatefulSet does: every pod a step creates or updates comes back running and ready
// (available minReadySeconds later), every pod it deletes is gone, nothing else changes (no node
// comes or goes); when the planner only waits for time to pass, time moves on to its deadline.
// It returns at most max steps, the last one saying what the rollout then waits for.
func forecastDaemonSet(snap *daemonset.Snapshot, now time.Time, max int) []forecastStep {
	s := *snap
	s.Nodes = slices.Clone(snap.Nodes)
	for i := range s.Nodes {
		s.Nodes[i].Pods = slices.Clone(s.Nodes[i].Pods)
	}
	s.Strays = nil // deleted by the first step; no later step depends on them
	minReady := time.Duration(s.Spec.MinReadySeconds) * time.Second
	var steps []forecastStep
	for round := 0; len(steps) < max && round < 4*max; round++ {
		p := daemonset.Compute(&s, now)
		actions := daemonSetActions(p)
		if len(actions) == 0 {
			if !p.Next.IsZero() {
				now = p.Next // only time is waited for
				continue
			}
			if len(steps) > 0 || len(p.Notes) > 0 {
				steps = append(steps, forecastStep{waits: p.Notes})
			}
			break
		}
		steps = append(steps, forecastStep{actions: actions})
		advanceDaemonSet(&s, p, now, round)
		now = now.Add(minReady + time.Second)
	}
	return steps
}

// daemonSetActions are the lines of a daemon set's plan p.
func daemonSetActions(p daemonset.Plan) []forecastAction {
	out, moved := resumeAndMoveActions(p.Resumes, p.Lifecycle)
	for _, c := range p.Creates {
		out = append(out, forecastAction{"create", fmt.Sprintf("on %s at %s: %s", c.Node, c.Revision, c.Reason)})
	}
	for _, d := range p.Deletes {
		out = append(out, forecastAction{"delete", d.Pod + ": " + d.Reason})
	}
	for _, u := range p.Updates {
		how := "in place"
		if u.Mode == daemonset.UpdateRecreate {
			how = "recreate"
		}
		out = append(out, forecastAction{how, u.Pod + ": " + u.Reason})
	}
	return append(out, moved...)
}

// advanceDaemonSet carries p out on s as the step's pods would end: created and updated pods
// running and ready at now, deleted and recreated ones gone (a later plan creates the node's pod
// again), lifecycle moves made.
func advanceDaemonSet(s *daemonset.Snapshot, p daemonset.Plan, now time.Time, round int) {
	ready := func(pod *daemonset.PodFacts) {
		pod.Phase, pod.Ready, pod.ReadySince = corev1.PodRunning, true, now
		pod.InPlaceUpdating, pod.GraceDue = false, time.Time{}
	}
	gone := map[string]bool{}
	for _, d := range p.Deletes {
		gone[d.Pod] = true
	}
	updates := map[string]daemonset.Update{}
	for _, u := range p.Updates {
		updates[u.Pod] = u
		if u.Mode == daemonset.UpdateRecreate {
			gone[u.Pod] = true
		}
	}
	moves := map[string]appspub.LifecycleStateType{}
	for _, m := range p.Lifecycle {
		moves[m.Pod] = m.To
	}
	resumed := map[string]bool{}
	for _, name := range p.Resumes {
		resumed[name] = true
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		for j := range n.Pods {
			pod := &n.Pods[j]
			if to, ok := moves[pod.Name]; ok {
				pod.Lifecycle = to
			}
			if resumed[pod.Name] {
				ready(pod)
			}
			if u, ok := updates[pod.Name]; ok && u.Mode == daemonset.UpdateInPlace {
				pod.Revision = u.Spec.Revision
				if pod.Lifecycle == appspub.LifecycleStatePreparingUpdate {
					pod.Lifecycle = lifecycle.AfterUpdate(pod.UpdatedReleased)
				}
				ready(pod)
			}
		}
		n.Pods = slices.DeleteFunc(n.Pods, func(f daemonset.PodFacts) bool { return gone[f.Name] })
		for _, c := range p.Creates {
			if c.Node != n.Name {
				continue
			}
			pod := daemonset.PodFacts{Name: fmt.Sprintf("(new pod %d on %s)", round, n.Name), Revision: c.Revision, Created: now,
				State: podcontrol.State{PreNormalReleased: true, UpdatedReleased: true}}
			ready(&pod)
			n.Pods = append(n.Pods, pod)
		}
	}
}
