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
		{"replicas back up: a pod in PreparingDelete returns to Normal",
			cs(3, preDelete, pods("a", "v2", 1, state(appspub.LifecycleStatePreparingDelete), deleteHeld, released),
				pods("b", "v2", 2, normal, deleteHeld, released)), []string{"a-0→Normal"}, nil, nil, 0, false},
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
