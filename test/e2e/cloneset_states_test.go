package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// A CloneSet's pods go through the lifecycle states OpenKruise writes, without spec.lifecycle:
// created PreparingNormal, Normal once scheduled and Ready (a pod that cannot be scheduled stays
// PreparingNormal), and an in-place update through Updating back to Normal, the state written in
// the write that ends the update: still three pod writes per pod updated in place.
func TestCloneSetStatesAsOpenKruise(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=states"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	seen := map[string][]string{} // pod → the states it was seen in, in order
	go func() {
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			mu.Lock()
			s := p.Labels[appspub.LifecycleStateKey]
			if l := seen[p.Name]; len(l) == 0 || l[len(l)-1] != s {
				seen[p.Name] = append(l, s)
			}
			mu.Unlock()
		}
	}()
	clone := newCloneSet(ns, "states", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "states", "2 available", func(s *appsv1alpha1.CloneSet) bool { return s.Status.AvailableReplicas == 2 })
	harness.Eventually(t, 30*time.Second, "both pods Normal", func() (bool, string) {
		pods := podsByName(t, ns, "app=states")
		n := 0
		for _, p := range pods {
			if p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStateNormal) {
				n++
			}
		}
		return n == 2, fmt.Sprint(len(pods), " pods, ", n, " Normal")
	})
	mu.Lock()
	for name, states := range seen {
		if !slices.Equal(states, []string{"PreparingNormal", "Normal"}) {
			t.Errorf("created pod %s went through %v, want [PreparingNormal Normal]", name, states)
		}
		seen[name] = states[len(states)-1:]
	}
	mu.Unlock()

	from := harness.AuditSize(sb.AuditLog)
	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitCloneSet(t, c, ns, "states", "updated in place", func(s *appsv1alpha1.CloneSet) bool {
		return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReadyReplicas == 2 && s.Status.AvailableReplicas == 2
	})
	harness.Eventually(t, 30*time.Second, "both pods Normal again", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for name, states := range seen {
			if states[len(states)-1] != "Normal" || len(states) < 3 {
				return false, fmt.Sprint(name, " ", states)
			}
		}
		return true, ""
	})
	mu.Lock()
	for name, states := range seen {
		if !slices.Equal(states, []string{"Normal", "Updating", "Normal"}) {
			t.Errorf("pod %s updated in place went through %v, want [Normal Updating Normal]", name, states)
		}
	}
	mu.Unlock()
	writes, err := harness.AuditWrites(sb.AuditLog, from, func(u string) bool { return u == sandbox.KruiseManagerUser })
	if err != nil {
		t.Fatal(err)
	}
	perPod := map[string][]string{}
	for _, wr := range writes {
		if wr.Resource == "pods" && wr.Namespace == ns {
			perPod[wr.Name] = append(perPod[wr.Name], strings.TrimSuffix(wr.Verb+" "+wr.Subresource, " "))
		}
	}
	for name, ws := range perPod {
		if len(ws) != 3 {
			t.Errorf("pod %s: %d writes for its in-place update %v, want 3 (gate False, spec with Updating, gate True with Normal)", name, len(ws), ws)
		}
	}

	// A pod that cannot be scheduled stays PreparingNormal.
	stuck := newCloneSet(ns, "stuck", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	stuck.Spec.Template.Spec.NodeSelector = map[string]string{"kruise.io/no-such-node": "true"}
	if err := c.Create(ctx, stuck); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "stuck", "1 pod", func(s *appsv1alpha1.CloneSet) bool { return s.Status.Replicas == 1 })
	harness.Consistently(t, 3*time.Second, "the unschedulable pod stays PreparingNormal", func() (bool, string) {
		for _, p := range podsByName(t, ns, "app=stuck") {
			if s := p.Labels[appspub.LifecycleStateKey]; s != string(appspub.LifecycleStatePreparingNormal) {
				return false, p.Name + " is " + s
			}
		}
		return true, ""
	})
}
