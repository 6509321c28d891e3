package lifecycle

import (
	"reflect"
	"testing"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// A Planner holds a pod only when its hook holds it, moves it once (not again when it is in the
// state already), and lets a pod held for an action no longer coming serve again.
func TestPlanner(t *testing.T) {
	hooks := &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{MarkPodNotReady: true}}
	var moves []Move
	acted := map[string]bool{}
	p := Planner{Hooks: hooks, Into: &moves, Acted: acted}
	if p.HoldForDelete("a", appspub.LifecycleStateNormal, false, "scale in") {
		t.Error("a pod its hook does not hold is held")
	}
	if !p.HoldForDelete("b", appspub.LifecycleStateNormal, true, "scale in") {
		t.Error("a pod its hook holds is not held")
	}
	if !p.HoldForDelete("c", appspub.LifecycleStatePreparingDelete, true, "scale in") {
		t.Error("a pod held already is not held")
	}
	if !p.HoldForUpdate("d", appspub.LifecycleStateNormal, true, "update") {
		t.Error("a pod its update hook holds is not held")
	}
	if !p.Unneeded("e", appspub.LifecycleStatePreparingDelete, false, true, true) ||
		!p.Unneeded("f", appspub.LifecycleStatePreparingUpdate, true, false, false) ||
		p.Unneeded("g", appspub.LifecycleStatePreparingDelete, true, false, true) || p.Unneeded("h", appspub.LifecycleStateNormal, false, false, true) {
		t.Error("Unneeded moved the wrong pods")
	}
	if !p.Progress("i", appspub.LifecycleStateUpdating, false, true, true) || p.Progress("j", appspub.LifecycleStateNormal, false, true, true) {
		t.Error("Progress moved the wrong pods")
	}
	if !reflect.DeepEqual(acted, map[string]bool{"b": true, "c": true, "d": true}) {
		t.Errorf("acted %v, want the held pods b, c, d", acted)
	}
	want := []Move{
		{Pod: "b", To: appspub.LifecycleStatePreparingDelete, MarkNotReady: true, Reason: "preDelete hook before: scale in"},
		{Pod: "d", To: appspub.LifecycleStatePreparingUpdate, Reason: "inPlaceUpdate hook before: update"},
		{Pod: "e", To: appspub.LifecycleStateNormal, Reason: "no deletion needed any more"},
		{Pod: "f", To: appspub.LifecycleStateUpdated, Reason: "no update needed any more"},
	}
	if len(moves) != 5 || !reflect.DeepEqual(moves[:4], want) || moves[4].Pod != "i" {
		t.Errorf("moves %+v, want %+v then i", moves, want)
	}
}
