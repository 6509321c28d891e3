package uniteddeployment

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/subset"
)

// Snapshot is what one reconcile observed of a UnitedDeployment.
type Snapshot struct {
	UD *appsv1alpha1.UnitedDeployment
	// Revision is the name of the update revision (the one recording spec.template); Current is
	// the current revision: status.currentRevision when that revision exists, else Revision.
	Revision, Current string
	// CollisionCount is the revisions' collision count, for the status.
	CollisionCount *int32
	// Workloads are the subset workloads of the template's kind the UnitedDeployment controls;
	// Strays are those of other kinds (left from an earlier template).
	Workloads []client.Object
	Strays    []client.Object
	// Pods are the UnitedDeployment's pods by subset name.
	Pods map[string][]*corev1.Pod
	Now  time.Time
}

// Plan is what a reconcile writes: subset workloads, then the status.
type Plan struct {
	Creates []client.Object
	Updates []Write
	Deletes []Write
	// PodLabels record pods' reservation (reserveUnschedulablePods); written first.
	PodLabels []LabelPatch
	// Status is the status to write once the writes succeed.
	Status appsv1alpha1.UnitedDeploymentStatus
	// RecheckAt is when the Adaptive strategy needs another look without any event (zero: never).
	RecheckAt time.Time
}

// Write is one workload to update or delete, and why.
type Write struct {
	Obj client.Object
	Why string
}

// Compute plans one reconcile of s.UD; it fails when the template has no workload or the subset
// replicas cannot be allocated (the UnitedDeployment is then left as it is).
//
// Invariants:
//   - Exactly one workload per subset of the topology, of the template's kind: missing ones are
//     created; of several for one subset, the oldest stays and the others are deleted; workloads
//     of removed subsets and of other kinds are deleted (OpenKruise deletes them too).
//   - A workload is written only when its revision, replicas, partition, patch, node terms or
//     tolerations differ from what its subset wants, so an unchanged UnitedDeployment (one taken
//     over from OpenKruise included) costs no write.
//   - Replicas come from Allocate; a subset's partition is its manual partition (0 when unset),
//     capped at its replicas.
func Compute(s Snapshot) (Plan, error) {
	ud := s.UD
	k := kindOf(ud)
	if k == nil {
		return Plan{}, fmt.Errorf("spec.template has no workload template")
	}
	bySubset, p := sortWorkloads(ud, k, s.Workloads)
	for _, o := range s.Strays {
		p.Deletes = append(p.Deletes, Write{Obj: o, Why: fmt.Sprintf("the template is no longer a %s", o.GetObjectKind().GroupVersionKind().Kind)})
	}

	states, sched, reserved := assess(s, bySubset)
	replicas, err := Allocate(&ud.Spec, states)
	if err != nil {
		return Plan{}, fmt.Errorf("allocate the subsets' replicas: %w", err)
	}
	partitions := partitionsOf(ud, replicas)
	for i := range ud.Spec.Topology.Subsets {
		sub := &ud.Spec.Topology.Subsets[i]
		t := target{Subset: sub, Revision: s.Revision, Replicas: replicas[sub.Name], Partition: partitions[sub.Name]}
		w, exists := bySubset[sub.Name]
		if !exists {
			obj, err := build(k, ud, t, nil)
			if err != nil {
				return Plan{}, err
			}
			p.Creates = append(p.Creates, obj)
			continue
		}
		obj, err := build(k, ud, t, w.Obj)
		if err != nil {
			return Plan{}, err
		}
		if why := needsWrite(w, t, k.Read(obj)); why != "" {
			p.Updates = append(p.Updates, Write{Obj: obj, Why: why})
		}
	}
	p.Status = status(s, bySubset, replicas, partitions, sched, reserved, len(p.Creates)+len(p.Deletes) > 0)
	for _, v := range sched {
		p.RecheckAt = subset.Earliest(p.RecheckAt, v.RecheckAt)
	}
	for _, sub := range ud.Spec.Topology.Subsets {
		if r, ok := reserved[sub.Name]; ok {
			p.PodLabels = append(p.PodLabels, r.Patches...)
			p.RecheckAt = subset.Earliest(p.RecheckAt, r.RecheckAt)
		}
	}
	return p, nil
}

// sortWorkloads keeps one workload per subset of the topology (the oldest, then by name) and
// plans the deletion of the others.
func sortWorkloads(ud *appsv1alpha1.UnitedDeployment, k kind, objs []client.Object) (map[string]workload, Plan) {
	var p Plan
	sorted := append([]client.Object(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].GetCreationTimestamp(), sorted[j].GetCreationTimestamp()
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return sorted[i].GetName() < sorted[j].GetName()
	})
	wanted := map[string]bool{}
	for _, sub := range ud.Spec.Topology.Subsets {
		wanted[sub.Name] = true
	}
	by := map[string]workload{}
	for _, o := range sorted {
		name, ok := o.GetLabels()[SubsetNameLabel]
		switch {
		case !ok:
			continue // not a subset workload: left alone
		case !wanted[name]:
			p.Deletes = append(p.Deletes, Write{Obj: o, Why: fmt.Sprintf("subset %q is no longer in the topology", name)})
		case by[name].Obj != nil:
			p.Deletes = append(p.Deletes, Write{Obj: o, Why: fmt.Sprintf("subset %q already has %s %s", name, k.Name(), by[name].Obj.GetName())})
		default:
			by[name] = k.Read(o)
		}
	}
	return by, p
}

// partitionsOf is each subset's partition: its manual partition (Manual update strategy), at most
// its replicas.
func partitionsOf(ud *appsv1alpha1.UnitedDeployment, replicas map[string]int32) map[string]int32 {
	out := make(map[string]int32, len(ud.Spec.Topology.Subsets))
	us := ud.Spec.UpdateStrategy
	for _, sub := range ud.Spec.Topology.Subsets {
		var p int32
		if (us.Type == "" || us.Type == appsv1alpha1.ManualUnitedDeploymentUpdateStrategyType) && us.ManualUpdate != nil {
			p = us.ManualUpdate.Partitions[sub.Name]
		}
		out[sub.Name] = max(0, min(p, replicas[sub.Name]))
	}
	return out
}

// assess returns the allocator's view of the existing subsets and, under the Adaptive strategy,
// each subset's schedulability verdict or, with reserveUnschedulablePods, its reservation.
func assess(s Snapshot, by map[string]workload) (map[string]SubsetState, map[string]subset.Verdict, map[string]reservation) {
	ud := s.UD
	states := make(map[string]SubsetState, len(by))
	ss := ud.Spec.Topology.ScheduleStrategy
	adaptive := ss.Type == appsv1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType
	reserving := reservingStrategy(ud)
	verdicts := map[string]subset.Verdict{}
	reservations := map[string]reservation{}
	for name, w := range by {
		st := SubsetState{Replicas: w.Replicas}
		switch {
		case reserving:
			since := markedSince(ud, name)
			r := reserve(s.Pods[name], since != nil, s.Revision, updateSince(ud), window(ud), s.Now)
			reservations[name] = r
			st.ReadyReplicas, st.ReservedPods, st.Unschedulable, st.Marked = r.Healthy, r.Reserved, r.Reserved > 0, since != nil
		default:
			for _, pod := range s.Pods[name] {
				if healthy(pod) {
					st.ReadyReplicas++
				}
			}
			if adaptive {
				v := subset.Assess(s.Pods[name], markedSince(ud, name), s.Now, window(ud))
				verdicts[name] = v
				st.Unschedulable = v.Unschedulable
			}
		}
		states[name] = st
	}
	return states, verdicts, reservations
}

// updateSince is when the running update began: the transition time of the UnitedDeployment's
// Updated condition (zero without one).
func updateSince(ud *appsv1alpha1.UnitedDeployment) time.Time {
	for _, c := range ud.Status.Conditions {
		if c.Type == Updated {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// healthy tells whether pod stays where it is under the Adaptive strategy: running, ready and
// not being deleted.
func healthy(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// window is the Adaptive strategy's durations (defaults: 30 s and 300 s, as OpenKruise's).
func window(ud *appsv1alpha1.UnitedDeployment) subset.Window {
	w := subset.Window{RescheduleCritical: 30 * time.Second, Unschedulable: 300 * time.Second}
	if a := ud.Spec.Topology.ScheduleStrategy.Adaptive; a != nil {
		if a.RescheduleCriticalSeconds != nil {
			w.RescheduleCritical = time.Duration(*a.RescheduleCriticalSeconds) * time.Second
		}
		if a.UnschedulableDuration != nil {
			w.Unschedulable = time.Duration(*a.UnschedulableDuration) * time.Second
		}
	}
	return w
}

// markedSince is when subset name was marked unschedulable (its Schedulable condition False), nil
// when it is not.
func markedSince(ud *appsv1alpha1.UnitedDeployment, name string) *time.Time {
	for _, st := range ud.Status.SubsetStatuses {
		if st.Name != name {
			continue
		}
		for _, c := range st.Conditions {
			if c.Type == SubsetSchedulable && c.Status == corev1.ConditionFalse {
				t := c.LastTransitionTime.Time
				return &t
			}
		}
	}
	return nil
}
