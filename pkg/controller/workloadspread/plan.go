package workloadspread

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/core/subset"
	"github.com/kruise-ng/kruise/pkg/core/updateorder"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
)

// IgnorePatchExistingPodsAnnotation, "true" on a spread, keeps the labels and annotations of a
// subset's patch off the pods the controller places after the fact (OpenKruise's).
const IgnorePatchExistingPodsAnnotation = "workloadspread.kruise.io/ignore-patch-existing-pods-metadata"

// noSubset groups the pods that belong to no subset of the spread.
const noSubset = ""

// snapshot is what one reconcile reads: the spread, its workload and that workload's pods.
type snapshot struct {
	spread *appsv1alpha1.WorkloadSpread
	// kind is the targetRef's kind; replicas what percentages refer to.
	kind     string
	replicas int32
	// pods are the workload's active pods the spread selects.
	pods []*corev1.Pod
	// nodes are the nodes of the pods not placed by this spread, by name.
	nodes map[string]*corev1.Node
	// latest is the workload's current revision (spreadrules.VersionIgnored for unversioned kinds, empty
	// when unknown: no deletion cost is set then).
	latest string
}

// adoption places a pod that was created before the spread (or outside it) into a subset.
type adoption struct {
	pod    *corev1.Pod
	subset string
	// patch is the merge patch of the pod's metadata.
	patch []byte
}

// note is an event on the spread.
type note struct {
	typ, reason, message string
}

// plan is what a reconcile does, decided from a snapshot alone.
type plan struct {
	status appsv1alpha1.WorkloadSpreadStatus
	// statusValid is false when a malformed quota makes the status unknowable.
	statusValid bool
	adopt       []adoption
	// costs are the deletion costs to write, by pod, only where they differ.
	costs map[*corev1.Pod]string
	// stuck are the pods to delete so their workload recreates them elsewhere, by subset.
	stuck map[string][]*corev1.Pod
	notes []note
	// recheckAt is when the plan may change without an event (zero: never).
	recheckAt time.Time
}

// computePlan decides a reconcile.
func computePlan(snap *snapshot, now time.Time) *plan {
	p := &plan{costs: map[*corev1.Pod]string{}, stuck: map[string][]*corev1.Pod{}, statusValid: true}
	versioned, all := p.group(snap)
	p.planCosts(snap, versioned)
	p.planStatus(snap, versioned, all, now)
	return p
}

// group returns, per revision, the pods of each subset (noSubset for the others), and the pods of
// each subset over all revisions, placing unplaced pods on the way (adoptions).
func (p *plan) group(snap *snapshot) (map[string]map[string][]*corev1.Pod, map[string][]*corev1.Pod) {
	byVersion := map[string][]*corev1.Pod{}
	for _, pod := range snap.pods {
		v := spreadrules.PodVersion(pod)
		byVersion[v] = append(byVersion[v], pod)
	}
	versioned := map[string]map[string][]*corev1.Pod{}
	all := map[string][]*corev1.Pod{}
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		groups := p.groupBySubset(snap, byVersion[v])
		versioned[v] = groups
		for name, pods := range groups {
			all[name] = append(all[name], pods...)
		}
	}
	return versioned, all
}

// groupBySubset groups one revision's pods by subset. A pod another spread (or none) placed, once
// scheduled, joins the subset its node fits best (preferred terms, then the patch's metadata,
// then room left), as OpenKruise does for the pods created before the spread.
func (p *plan) groupBySubset(snap *snapshot, pods []*corev1.Pod) map[string][]*corev1.Pod {
	spec := snap.spread.Spec.Subsets
	room := map[string]int{}
	for _, s := range spec {
		q, err := spreadrules.MaxReplicas(s.MaxReplicas, snap.replicas)
		if err != nil || q == spreadrules.Unlimited {
			q = math.MaxInt32
		}
		room[s.Name] = int(q)
	}
	for _, pod := range pods {
		if m := placed(snap.spread, pod); m != nil {
			if _, ok := room[m.Subset]; ok {
				room[m.Subset]--
			}
		}
	}
	out := map[string][]*corev1.Pod{}
	for _, pod := range pods {
		name := noSubset
		if m := placed(snap.spread, pod); m != nil {
			if _, ok := room[m.Subset]; ok {
				name = m.Subset
			}
		} else if best := bestSubset(snap, pod, room); best != nil {
			name = best.Name
			room[name]--
			p.adopt = append(p.adopt, adoption{pod: pod, subset: name, patch: adoptionPatch(snap.spread, best)})
		}
		out[name] = append(out[name], pod)
	}
	return out
}

// placed is the pod's matched-workloadspread annotation when it names this spread and a subset.
func placed(spread *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) *spreadrules.Matched {
	m := spreadrules.MatchedOf(pod)
	if m == nil || m.Name != spread.Name || m.Subset == "" {
		return nil
	}
	return m
}

// bestSubset is the subset a scheduled pod's node fits best, nil when none fits (or the pod is
// not scheduled, or its node is unknown).
func bestSubset(snap *snapshot, pod *corev1.Pod, room map[string]int) *appsv1alpha1.WorkloadSpreadSubset {
	node := snap.nodes[pod.Spec.NodeName]
	if pod.Spec.NodeName == "" || node == nil {
		return nil
	}
	var best *appsv1alpha1.WorkloadSpreadSubset
	bestScore := int64(-1)
	for i := range snap.spread.Spec.Subsets {
		s := &snap.spread.Spec.Subsets[i]
		fits, err := subset.NodeFitsWorkloadSpreadSubset(node, pod, s)
		if err != nil || !fits {
			continue
		}
		var nodeScore int64
		if len(s.PreferredNodeSelectorTerms) > 0 {
			if terms, err := nodeaffinity.NewPreferredSchedulingTerms(s.PreferredNodeSelectorTerms); err == nil {
				nodeScore = terms.Score(node)
			}
		}
		var quota int64
		if room[s.Name] > 0 {
			quota = 1
		}
		if score := nodeScore*100 + podScore(s, pod)*10 + quota; score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// patchMetadata is the labels and annotations of a subset's patch.
func patchMetadata(s *appsv1alpha1.WorkloadSpreadSubset) (labels, annotations map[string]string) {
	var patch struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if len(s.Patch.Raw) > 0 {
		_ = json.Unmarshal(s.Patch.Raw, &patch)
	}
	return patch.Metadata.Labels, patch.Metadata.Annotations
}

// podScore is 1 when the pod carries every label and annotation of the subset's patch already.
func podScore(s *appsv1alpha1.WorkloadSpreadSubset, pod *corev1.Pod) int64 {
	labels, annotations := patchMetadata(s)
	if len(labels)+len(annotations) == 0 {
		return 0
	}
	for k, v := range labels {
		if pod.Labels[k] != v {
			return 0
		}
	}
	for k, v := range annotations {
		if pod.Annotations[k] != v {
			return 0
		}
	}
	return 1
}

// adoptionPatch is the metadata merge patch placing a pod into s after the fact: the annotation,
// with the patch's labels and annotations unless the spread says to ignore them.
func adoptionPatch(spread *appsv1alpha1.WorkloadSpread, s *appsv1alpha1.WorkloadSpreadSubset) []byte {
	labels, annotations := map[string]string{}, map[string]string{}
	if spread.Annotations[IgnorePatchExistingPodsAnnotation] != "true" {
		l, a := patchMetadata(s)
		maps.Copy(labels, l)
		maps.Copy(annotations, a)
	}
	annotations[spreadrules.MatchedAnnotation] = spreadrules.Matched{Name: spread.Name, Subset: s.Name}.String()
	meta := map[string]any{"annotations": annotations}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	b, _ := json.Marshal(map[string]any{"metadata": meta})
	return b
}

// planCosts sets each revision's deletion costs (spreadrules.DeletionCosts): the latest revision loses its
// last subset first, the others their first.
func (p *plan) planCosts(snap *snapshot, versioned map[string]map[string][]*corev1.Pod) {
	if !spreadrules.CostKinds[snap.kind] || snap.latest == "" {
		return
	}
	for _, v := range slices.Sorted(maps.Keys(versioned)) {
		groups := versioned[v]
		in := spreadrules.CostInput{WorkloadReplicas: snap.replicas, OldRevision: v != snap.latest, Unmatched: costPods(groups[noSubset])}
		for _, s := range snap.spread.Spec.Subsets {
			in.Subsets = append(in.Subsets, spreadrules.CostSubset{Name: s.Name, MaxReplicas: s.MaxReplicas, Pods: costPods(groups[s.Name])})
		}
		costs, err := spreadrules.DeletionCosts(in)
		if err != nil {
			p.notes = append(p.notes, note{corev1.EventTypeWarning, "DeletionCostSkipped", err.Error()})
		}
		for _, pods := range groups {
			for _, pod := range pods {
				if c, ok := costs[pod.Name]; ok && pod.Annotations[spreadrules.DeletionCostAnnotation] != c {
					p.costs[pod] = c
				}
			}
		}
	}
}

func costPods(pods []*corev1.Pod) []spreadrules.Pod {
	out := make([]spreadrules.Pod, 0, len(pods))
	for _, pod := range pods {
		out = append(out, spreadrules.Pod{Name: pod.Name, Active: workloadfinder.Active(pod), Rank: updateorder.RankOf(pod)})
	}
	return out
}

// planStatus computes the status: the subsets over all revisions, and per revision (keeping a
// revision without pods while it still holds records).
func (p *plan) planStatus(snap *snapshot, versioned map[string]map[string][]*corev1.Pod, all map[string][]*corev1.Pod, now time.Time) {
	spread := snap.spread
	p.status = appsv1alpha1.WorkloadSpreadStatus{ObservedGeneration: spread.Generation,
		Conditions: registrationmark.Entries.With(registrationmark.SpreadPlacement, spread, spread.Status.Conditions, metav1.NewTime(now))}
	var ok bool
	p.status.SubsetStatuses, ok = p.subsetStatuses(snap, spread.Status.SubsetStatuses, all, now, true)
	p.statusValid = ok
	versions := map[string]bool{}
	for v := range versioned {
		versions[v] = true
	}
	for v := range spread.Status.VersionedSubsetStatuses {
		versions[v] = true
	}
	for _, v := range slices.Sorted(maps.Keys(versions)) {
		statuses, ok := p.subsetStatuses(snap, spread.Status.VersionedSubsetStatuses[v], versioned[v], now, false)
		p.statusValid = p.statusValid && ok
		if versioned[v] == nil && allEmpty(statuses) {
			continue
		}
		if p.status.VersionedSubsetStatuses == nil {
			p.status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{}
		}
		p.status.VersionedSubsetStatuses[v] = statuses
	}
}

func allEmpty(statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) bool {
	for i := range statuses {
		if !spreadrules.Empty(&statuses[i]) {
			return false
		}
	}
	return true
}

// subsetStatuses computes the statuses of the spec's subsets from their pods and old statuses;
// overall is true for the statuses over all revisions (whose stuck pods are deleted and whose
// records' expiry is reported). ok is false when a quota is malformed.
func (p *plan) subsetStatuses(snap *snapshot, old []appsv1alpha1.WorkloadSpreadSubsetStatus, pods map[string][]*corev1.Pod,
	now time.Time, overall bool) ([]appsv1alpha1.WorkloadSpreadSubsetStatus, bool) {
	spread := snap.spread
	oldByName := map[string]*appsv1alpha1.WorkloadSpreadSubsetStatus{}
	for i := range old {
		oldByName[old[i].Name] = &old[i]
	}
	out := make([]appsv1alpha1.WorkloadSpreadSubsetStatus, 0, len(spread.Spec.Subsets))
	for i, s := range spread.Spec.Subsets {
		res, err := spreadrules.ComputeSubsetStatus(spreadrules.SubsetInput{Name: s.Name, MaxReplicas: s.MaxReplicas, WorkloadReplicas: snap.replicas,
			Pods: members(pods[s.Name]), Old: oldByName[s.Name]}, now)
		if err != nil {
			p.notes = append(p.notes, note{corev1.EventTypeWarning, "InvalidMaxReplicas", fmt.Sprintf("subset %s: %v", s.Name, err)})
			return nil, false
		}
		p.recheckAt = subset.Earliest(p.recheckAt, res.RecheckAt)
		for _, key := range res.CreateExpired {
			p.notes = append(p.notes, note{corev1.EventTypeWarning, "CreatePodFailed",
				fmt.Sprintf("Pod %s/%s was expected to be created but it wasn't", spread.Namespace, key)})
		}
		for _, name := range res.DeleteExpired {
			p.notes = append(p.notes, note{corev1.EventTypeWarning, "DeletePodFailed",
				fmt.Sprintf("Pod %s/%s was expected to be deleted but it wasn't", spread.Namespace, name)})
		}
		st := res.Status
		p.schedulable(snap, &st, oldByName[s.Name], pods[s.Name], i == len(spread.Spec.Subsets)-1, overall, now)
		out = append(out, st)
	}
	return out, true
}

func members(pods []*corev1.Pod) []spreadrules.Member {
	out := make([]spreadrules.Member, 0, len(pods))
	for _, pod := range pods {
		out = append(out, spreadrules.Member{Name: pod.Name, Key: spreadrules.Key(pod), Active: workloadfinder.Active(pod)})
	}
	return out
}

// rescheduleCritical is how long a pod may fail to schedule under the Adaptive strategy; zero
// when the spread does not reschedule (Fixed, or no rescheduleCriticalSeconds, as in OpenKruise).
func rescheduleCritical(spread *appsv1alpha1.WorkloadSpread) time.Duration {
	st := spread.Spec.ScheduleStrategy
	if st.Type != appsv1alpha1.WorkloadSpreadAdaptiveScheduleStrategy || st.Adaptive == nil || st.Adaptive.RescheduleCriticalSeconds == nil {
		return 0
	}
	return time.Duration(*st.Adaptive.RescheduleCriticalSeconds) * time.Second
}

// schedulable sets the subset's Schedulable condition: absent unless the spread reschedules;
// always True for the last subset; otherwise pkg/core/subset's verdict over its pods. The stuck pods of
// the overall statuses are to be deleted.
func (p *plan) schedulable(snap *snapshot, st *appsv1alpha1.WorkloadSpreadSubsetStatus, old *appsv1alpha1.WorkloadSpreadSubsetStatus,
	pods []*corev1.Pod, last, overall bool, now time.Time) {
	typ := appsv1alpha1.WorkloadSpreadSubsetSchedulable
	critical := rescheduleCritical(snap.spread)
	if critical <= 0 {
		st.Conditions = spreadrules.SetCondition(st.Conditions, typ, nil)
		return
	}
	oldCond := spreadrules.Condition(old, typ)
	var v subset.Verdict
	if !last {
		var marked *time.Time
		if oldCond != nil && oldCond.Status == corev1.ConditionFalse {
			marked = &oldCond.LastTransitionTime.Time
		}
		v = subset.Assess(pods, marked, now, subset.Window{RescheduleCritical: critical, Unschedulable: subset.WorkloadSpreadUnschedulableDuration})
		p.recheckAt = subset.Earliest(p.recheckAt, v.RecheckAt)
	}
	cond := spreadrules.SchedulableCondition(v, oldCond, now)
	st.Conditions = spreadrules.SetCondition(st.Conditions, typ, &cond)
	if !overall {
		return
	}
	if len(v.Stuck) > 0 {
		p.stuck[st.Name] = v.Stuck
	}
	wasFalse := oldCond != nil && oldCond.Status == corev1.ConditionFalse
	switch {
	case v.Unschedulable && !wasFalse:
		p.notes = append(p.notes, note{corev1.EventTypeWarning, "SubsetUnschedulable", fmt.Sprintf(
			"Subset %s is unschedulable until %s: %d pod(s) could not be scheduled within %s", st.Name, v.Until.UTC().Format(time.RFC3339), len(v.Stuck), critical)})
	case !v.Unschedulable && wasFalse:
		p.notes = append(p.notes, note{corev1.EventTypeNormal, "RecoverSchedulable", fmt.Sprintf(
			"Subset %s of WorkloadSpread %s/%s is recovered from unschedulable to schedulable", st.Name, snap.spread.Namespace, snap.spread.Name)})
	}
}

// sortedStuck lists the stuck pods by subset name, then pod name.
func (p *plan) sortedStuck() []stuckPod {
	var out []stuckPod
	for name, pods := range p.stuck {
		for _, pod := range pods {
			out = append(out, stuckPod{subset: name, pod: pod})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].subset != out[j].subset {
			return out[i].subset < out[j].subset
		}
		return out[i].pod.Name < out[j].pod.Name
	})
	return out
}

type stuckPod struct {
	subset string
	pod    *corev1.Pod
}
