package spreadrules

import (
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Slot is what admission reads of one subset: its spec quota and its status for the pod's
// revision.
type Slot struct {
	// Name is the subset's name.
	Name string
	// MaxReplicas is the subset's spec.maxReplicas; nil means unlimited.
	MaxReplicas *intstr.IntOrString
	// MissingReplicas is status.missingReplicas: how many more pods the subset may take once its
	// creating and deleting pods are counted; Unlimited (-1) when there is no limit.
	MissingReplicas int32
	// Unschedulable is true while the subset's Schedulable condition is False (what the
	// controller writes from pkg/core/subset's Verdict).
	Unschedulable bool
	// Recorded are the keys in the subset's creatingPods and deletingPods.
	Recorded sets.Set[string]
}

// SlotsFrom builds the slots admission iterates: one per status, in status order (the order
// OpenKruise walks), with the quota of the spec subset of the same name.
func SlotsFrom(spec []appsv1alpha1.WorkloadSpreadSubset, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) []Slot {
	byName := make(map[string]*intstr.IntOrString, len(spec))
	for i := range spec {
		byName[spec[i].Name] = spec[i].MaxReplicas
	}
	out := make([]Slot, 0, len(statuses))
	for _, st := range statuses {
		s := Slot{Name: st.Name, MaxReplicas: byName[st.Name], MissingReplicas: st.MissingReplicas,
			Recorded: sets.KeySet(st.CreatingPods).Union(sets.KeySet(st.DeletingPods))}
		for _, c := range st.Conditions {
			if c.Type == appsv1alpha1.WorkloadSpreadSubsetSchedulable && c.Status == corev1.ConditionFalse {
				s.Unschedulable = true
			}
		}
		out = append(out, s)
	}
	return out
}

// Change is a status write admission records for one pod.
type Change struct {
	// Subset is the subset whose status changes.
	Subset string
	// Key is the pod's name, or the generated ID of a pod admitted before it had a name.
	Key string
	// Creating is true when Key goes into creatingPods, false for deletingPods.
	Creating bool
	// MissingReplicas is the subset's new missingReplicas.
	MissingReplicas int32
}

// Apply returns a copy of statuses with c recorded at now; statuses is not modified.
func (c Change) Apply(statuses []appsv1alpha1.WorkloadSpreadSubsetStatus, now time.Time) []appsv1alpha1.WorkloadSpreadSubsetStatus {
	out := make([]appsv1alpha1.WorkloadSpreadSubsetStatus, len(statuses))
	for i := range statuses {
		statuses[i].DeepCopyInto(&out[i])
		if out[i].Name != c.Subset {
			continue
		}
		out[i].MissingReplicas = c.MissingReplicas
		target := &out[i].DeletingPods
		if c.Creating {
			target = &out[i].CreatingPods
		}
		m := maps.Clone(*target)
		if m == nil {
			m = map[string]metav1.Time{}
		}
		m[c.Key] = metav1.NewTime(now)
		*target = m
	}
	return out
}

// Decision is the outcome of admitting one pod creation or deletion.
type Decision struct {
	// Subset is the chosen (or the pod's) subset; empty when there is none.
	Subset string
	// Change is the status to record; nil when the status stays as it is.
	Change *Change
	// Reason says, in words, why the decision is what it is.
	Reason string
}

// Creation is a pod being created.
type Creation struct {
	// Name is the pod's name; empty when the workload only set generateName.
	Name string
	// GeneratedID identifies a pod without a name in creatingPods (the webhook makes a UUID and
	// writes it into the pod's matched-workloadspread annotation). Unused when Name is set.
	GeneratedID string
	// Strategy is spec.scheduleStrategy.type; unschedulable subsets are skipped only when Adaptive.
	Strategy appsv1alpha1.WorkloadSpreadScheduleStrategyType
}

// Choose picks the subset a new pod is admitted into, as OpenKruise's pod webhook does for every
// workload but a StatefulSet (see ChooseByOrdinal): a single unlimited subset takes every pod with
// no bookkeeping; a pod already recorded in some subset keeps it; otherwise the first slot that is
// not unschedulable (Adaptive) and has missingReplicas > 0 or unlimited wins, and a limited winner
// records the pod in creatingPods with one replica less missing.
func Choose(slots []Slot, pod Creation) Decision {
	if len(slots) == 1 && slots[0].MaxReplicas == nil {
		return Decision{Subset: slots[0].Name, Reason: "the only subset is unlimited"}
	}
	if pod.Name != "" {
		if s, ok := recordedIn(slots, pod.Name); ok {
			return Decision{Subset: s, Reason: fmt.Sprintf("pod already recorded in subset %s", s)}
		}
	}
	for _, s := range slots {
		if s.Unschedulable && pod.Strategy == appsv1alpha1.WorkloadSpreadAdaptiveScheduleStrategy {
			continue
		}
		if s.MissingReplicas == Unlimited {
			return Decision{Subset: s.Name, Reason: fmt.Sprintf("subset %s is unlimited", s.Name)}
		}
		if s.MissingReplicas > 0 {
			key := pod.Name
			if key == "" {
				key = pod.GeneratedID
			}
			return Decision{Subset: s.Name, Reason: fmt.Sprintf("subset %s misses %d replicas", s.Name, s.MissingReplicas),
				Change: &Change{Subset: s.Name, Key: key, Creating: true, MissingReplicas: s.MissingReplicas - 1}}
		}
	}
	return Decision{Reason: "no subset: every subset is full or unschedulable"}
}

// Release is the bookkeeping of deleting or evicting an active pod that was admitted into
// subset, as OpenKruise's pod webhook does it: a pod already recorded anywhere, an unknown subset
// or an unlimited one change nothing; otherwise the pod goes into deletingPods with one more
// replica missing, never more than an integer maxReplicas (as the controller counts: a subset
// already missing all its replicas does not count the pod, so its going frees nothing).
func Release(slots []Slot, pod, subset string) Decision {
	if s, ok := recordedIn(slots, pod); ok {
		return Decision{Reason: fmt.Sprintf("pod already recorded in subset %s", s)}
	}
	for _, s := range slots {
		if s.Name != subset {
			continue
		}
		if s.MissingReplicas == Unlimited {
			return Decision{Subset: s.Name, Reason: fmt.Sprintf("subset %s is unlimited", s.Name)}
		}
		missing := s.MissingReplicas
		if missing >= 0 && (s.MaxReplicas == nil || s.MaxReplicas.Type != intstr.Int || missing < s.MaxReplicas.IntVal) {
			missing++
		}
		return Decision{Subset: s.Name, Reason: fmt.Sprintf("subset %s frees a replica", s.Name),
			Change: &Change{Subset: s.Name, Key: pod, MissingReplicas: missing}}
	}
	return Decision{Reason: fmt.Sprintf("subset %s not in status", subset)}
}

func recordedIn(slots []Slot, key string) (string, bool) {
	for _, s := range slots {
		if s.Recorded.Has(key) {
			return s.Name, true
		}
	}
	return "", false
}

// Replay is c, a decision already answered, recorded again on slots that moved on since it was
// made (another writer's status, a recount): a creation takes one replica more from its subset,
// a deletion frees one, each from the subset's missingReplicas as slots have it now. Nil when
// slots already record c's pod or its subset is unlimited or gone: nothing is left to write.
func Replay(slots []Slot, c Change) *Change {
	if !c.Creating {
		return Release(slots, c.Key, c.Subset).Change
	}
	if _, ok := recordedIn(slots, c.Key); ok {
		return nil
	}
	for _, s := range slots {
		if s.Name != c.Subset || s.MissingReplicas == Unlimited {
			continue
		}
		missing := s.MissingReplicas - 1
		if missing < 0 {
			missing = 0 // never below zero, as the controller counts
		}
		return &Change{Subset: s.Name, Key: c.Key, Creating: true, MissingReplicas: missing}
	}
	return nil
}

// Filtered tells whether a pod's labels pass the spread's targetFilter.selector (no filter: all).
func Filtered(ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	f := ws.Spec.TargetFilter
	if f == nil || f.Selector == nil {
		return true, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(f.Selector)
	if err != nil {
		return false, fmt.Errorf("spec.targetFilter.selector: %w", err)
	}
	return sel.Matches(labels.Set(pod.Labels)), nil
}
