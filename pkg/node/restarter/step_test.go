package restarter

import (
	"testing"
	"time"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	c := v1alpha1.ContainerRecreateRequestContainer{Name: "app",
		StatusContext: &v1alpha1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://old"}}
	req := func(force bool, minStarted int32) *v1alpha1.ContainerRecreateRequest {
		return &v1alpha1.ContainerRecreateRequest{Spec: v1alpha1.ContainerRecreateRequestSpec{
			Strategy: &v1alpha1.ContainerRecreateRequestStrategy{ForceRecreate: force, MinStartedSeconds: minStarted}}}
	}
	old := &Container{ID: "old", Running: true, Started: now.Add(-time.Hour)}
	fresh := &Container{ID: "new", Running: true, Started: now.Add(-2 * time.Second)}
	exited := &Container{ID: "old"}
	killed := v1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app", IsKilled: true}
	none := v1alpha1.ContainerRecreateRequestContainerRecreateState{Name: "app"}
	for name, tc := range map[string]struct {
		crr  *v1alpha1.ContainerRecreateRequest
		s    v1alpha1.ContainerRecreateRequestContainerRecreateState
		cur  *Container
		want Action
	}{
		"still the original: stop it":                    {req(false, 0), none, old, Stop},
		"stopped, not started again: wait":               {req(false, 0), killed, exited, Wait},
		"stopped and started again: done":                {req(false, 0), killed, fresh, Done},
		"started again but not for minStartedSeconds":    {req(false, 5), killed, fresh, Wait},
		"restarted by someone else before us: done":      {req(false, 0), none, fresh, Done},
		"restarted before us, forceRecreate: stop again": {req(true, 0), none, fresh, Stop},
		"no container at all: stop (nothing to stop)":    {req(false, 0), none, nil, Stop},
	} {
		if got := Decide(tc.crr, c, tc.s, tc.cur, now); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if RuntimeID("containerd://abc") != "abc" || RuntimeID("abc") != "abc" {
		t.Error("RuntimeID")
	}
}

// In a pod that has ended, a running container is stopped and a stopped one is done: the kubelet
// starts neither again.
func TestDecideEnded(t *testing.T) {
	running, stopped := &Container{ID: "c1", Running: true}, &Container{ID: "c1"}
	for _, tc := range []struct {
		name   string
		killed bool
		cur    *Container
		want   Action
	}{
		{"running", false, running, Stop},
		{"being stopped", true, running, Wait},
		{"stopped", true, stopped, Done},
		{"gone from the runtime", false, nil, Done},
	} {
		if got := DecideEnded(v1alpha1.ContainerRecreateRequestContainerRecreateState{IsKilled: tc.killed}, tc.cur); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
