package cloneset

import (
	"fmt"
	"slices"
	"testing"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func hooks(l appspub.Lifecycle) func(*Snapshot) { return func(s *Snapshot) { s.Spec.Lifecycle = &l } }
func state(st appspub.LifecycleStateType) func(*PodFacts) {
	return func(p *PodFacts) { p.Lifecycle = st }
}
func deleteHeld(p *PodFacts) { p.PreDeleteHeld = true }
func updateHeld(p *PodFacts) { p.PreUpdateHeld = true }
func released(p *PodFacts)   { p.PreNormalReleased, p.UpdatedReleased = true, true }

func (p Plan) moves() []string {
	var out []string
	for _, m := range p.Lifecycle {
		out = append(out, fmt.Sprintf("%s→%s", m.Pod, m.To))
	}
	return out
}

// TestPlanPreparingDelete: pods already in PreparingDelete when replicas go up again, as
// OpenKruise's managePreparingDelete and calculateDiffsWithExpectation count them: without
// markPodNotReady as many as replicas lack are taken back (PreparingNormal); the others stay held,
// or are deleted once released, and count for scaling out unless ScalingExcludePreparingDelete (the
// manager's flag or the CloneSet's label) says not to.
func TestPlanPreparingDelete(t *testing.T) {
	keepReady := hooks(appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"x/hold"}}})
	markNotReady := hooks(appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"x/hold"}, MarkPodNotReady: true}})
	normal, preparing := state(appspub.LifecycleStateNormal), state(appspub.LifecycleStatePreparingDelete)
	exclude := func(s *Snapshot) { s.ExcludePreparingDelete = true }
	cases := []struct {
		name           string
		snap           *Snapshot
		opts           Options
		moves, deletes []string
		creates        int
	}{
		{"held, no markPodNotReady: taken back",
			cs(3, keepReady, pods("a", "v2", 1, preparing, deleteHeld), pods("b", "v2", 2, normal, released)),
			Options{}, []string{"a-0→PreparingNormal"}, nil, 0},
		{"held, no markPodNotReady, one more than needed: one taken back, by name, the other stays",
			cs(3, keepReady, pods("a", "v2", 2, preparing, deleteHeld), pods("b", "v2", 2, normal, released)),
			Options{}, []string{"a-0→PreparingNormal"}, nil, 0},
		{"held, markPodNotReady: stays, counted, nothing created",
			cs(3, markNotReady, pods("a", "v2", 1, preparing, deleteHeld), pods("b", "v2", 2, normal, released)),
			Options{}, nil, nil, 0},
		{"held, markPodNotReady, excluded by the manager's flag: its replacement is created at once",
			cs(3, markNotReady, pods("a", "v2", 1, preparing, deleteHeld), pods("b", "v2", 2, normal, released)),
			Options{ScalingExcludePreparingDelete: true}, nil, nil, 1},
		{"held, markPodNotReady, excluded by the CloneSet's label: its replacement is created at once",
			cs(3, markNotReady, exclude, pods("a", "v2", 1, preparing, deleteHeld), pods("b", "v2", 2, normal, released)),
			Options{}, nil, nil, 1},
		{"released, markPodNotReady: deleted, replaced",
			cs(3, markNotReady, pods("a", "v2", 1, preparing, released), pods("b", "v2", 2, normal, released)),
			Options{}, nil, []string{"a-0"}, 1},
		{"released, replicas lower: deleted before any other pod is chosen",
			cs(2, markNotReady, pods("a", "v2", 1, preparing, released), pods("b", "v2", 3, normal, released)),
			Options{}, nil, []string{"a-0", "b-0"}, 0},
		{"hook removed from the spec: a pod left in PreparingDelete is taken back when needed",
			cs(3, pods("a", "v2", 1, preparing), pods("b", "v2", 2, normal, released)),
			Options{}, []string{"a-0→PreparingNormal"}, nil, 0},
		{"held for a recreating update: never taken back, deleted once released",
			cs(2, keepReady, updateType(v1alpha1.RecreateCloneSetUpdateStrategyType), pods("a", "v1", 1, preparing, deleteHeld),
				pods("b", "v1", 1, normal, released)), Options{}, nil, nil, 0},
		{"specified for deletion: never taken back",
			cs(3, markNotReady, pods("a", "v2", 1, preparing, deleteHeld, specified), pods("b", "v2", 2, normal, released)),
			Options{}, nil, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.snap, t0, tc.opts)
			if !slices.Equal(p.moves(), tc.moves) || !slices.Equal(p.deleted(), tc.deletes) || len(p.Creates) != tc.creates {
				t.Fatalf("moves %v deletes %v creates %d; want %v %v %d", p.moves(), p.deleted(), len(p.Creates), tc.moves, tc.deletes, tc.creates)
			}
		})
	}
}

func TestPlanLifecycleHooks(t *testing.T) {
	ip := v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
	preDelete := hooks(appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{FinalizersHandler: []string{"x/hold"}, MarkPodNotReady: true}})
	inPlace := hooks(appspub.Lifecycle{InPlaceUpdate: &appspub.LifecycleHook{LabelsHandler: map[string]string{"hold": "true"}}})
	normal := state(appspub.LifecycleStateNormal)
	cases := []struct {
		name                    string
		snap                    *Snapshot
		moves, deletes, updates []string
		creates                 int
		markNotReady            bool
	}{
		{"scale in: a held pod is prepared for deletion, not deleted, not replaced",
			cs(2, preDelete, pods("a", "v2", 3, normal, deleteHeld, released)), []string{"a-0→PreparingDelete"}, nil, nil, 0, true},
		{"scale in: a pod already held stays, nothing else is deleted",
			cs(2, preDelete, pods("a", "v2", 1, state(appspub.LifecycleStatePreparingDelete), deleteHeld, released),
				pods("b", "v2", 2, normal, deleteHeld, released)), nil, nil, nil, 0, false},
		{"scale in: a released pod in PreparingDelete is deleted",
			cs(2, preDelete, pods("a", "v2", 1, state(appspub.LifecycleStatePreparingDelete), released),
				pods("b", "v2", 2, normal, deleteHeld, released)), nil, []string{"a-0"}, nil, 0, false},
		{"replicas back up, hook marks NotReady: the deletion stands, the held pod counts, nothing is created",
			cs(3, preDelete, pods("a", "v2", 1, state(appspub.LifecycleStatePreparingDelete), deleteHeld, released),
				pods("b", "v2", 2, normal, deleteHeld, released)), nil, nil, nil, 0, false},
		{"specified delete: held, its replacement waits for room",
			cs(2, preDelete, pods("a", "v2", 1, normal, deleteHeld, released, specified), pods("b", "v2", 1, normal, released)),
			[]string{"a-0→PreparingDelete"}, nil, nil, 0, true},
		{"in-place update: held pods are prepared within maxUnavailable, not updated",
			cs(3, updateType(ip), maxUnavailable("2"), inPlace, pods("a", "v1", 3, normal, updateHeld)),
			[]string{"a-0→PreparingUpdate", "a-1→PreparingUpdate"}, nil, nil, 0, false},
		{"in-place update: a released PreparingUpdate pod is updated",
			cs(3, updateType(ip), maxUnavailable("1"), inPlace, pods("a", "v1", 1, state(appspub.LifecycleStatePreparingUpdate), released),
				pods("b", "v1", 2, normal, updateHeld)), nil, nil, []string{"a-0"}, 0, false},
		{"after the update: Updated until the hook is satisfied, then Normal",
			cs(2, inPlace, pods("a", "v2", 1, state(appspub.LifecycleStateUpdating)), pods("b", "v2", 1, state(appspub.LifecycleStateUpdated), released)),
			[]string{"a-0→Updated", "b-0→Normal"}, nil, nil, 0, false},
		{"template reverted: a PreparingUpdate pod at the update revision needs nothing",
			cs(1, inPlace, pods("a", "v2", 1, state(appspub.LifecycleStatePreparingUpdate), released)), []string{"a-0→Normal"}, nil, nil, 0, false},
		// Kruise's deliberate difference (docs/openkruise.md): OpenKruise leaves such a pod held.
		{"partition raised to keep every pod: a held PreparingUpdate pod goes back to Normal",
			cs(3, updateType(ip), partition("3"), inPlace, pods("a", "v1", 1, state(appspub.LifecycleStatePreparingUpdate), updateHeld),
				pods("b", "v1", 2, normal, updateHeld)), []string{"a-0→Normal"}, nil, nil, 0, false},
		{"preNormal: released pods become Normal, the others wait",
			cs(2, pods("a", "v2", 1, state(appspub.LifecycleStatePreparingNormal), released), pods("b", "v2", 1, state(appspub.LifecycleStatePreparingNormal))),
			[]string{"a-0→Normal"}, nil, nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.snap, t0, Options{})
			if !slices.Equal(p.moves(), tc.moves) || !slices.Equal(p.deleted(), tc.deletes) || !slices.Equal(p.updated(), tc.updates) ||
				len(p.Creates) != tc.creates {
				t.Fatalf("moves %v deletes %v updates %v creates %d; want %v %v %v %d", p.moves(), p.deleted(), p.updated(),
					len(p.Creates), tc.moves, tc.deletes, tc.updates, tc.creates)
			}
			for _, m := range p.Lifecycle {
				if m.MarkNotReady != (tc.markNotReady && m.To == appspub.LifecycleStatePreparingDelete) {
					t.Errorf("move %+v: markNotReady %v", m, m.MarkNotReady)
				}
			}
		})
	}
	// Pods a hook holds are not available.
	st := ComputeStatus(cs(2, pods("a", "v2", 1, state(appspub.LifecycleStatePreparingNormal)), pods("b", "v2", 1, state(appspub.LifecycleStateUpdated))),
		t0, v1alpha1.CloneSetStatus{}, 1, ApplyErrors{})
	if st.ReadyReplicas != 2 || st.AvailableReplicas != 0 {
		t.Errorf("ready %d available %d; want 2 ready, none available", st.ReadyReplicas, st.AvailableReplicas)
	}
}
