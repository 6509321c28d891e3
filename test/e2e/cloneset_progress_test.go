package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/controller/cloneset"
	"github.com/kruise-ng/kruise/test/harness"
)

func progressing(cs *appsv1alpha1.CloneSet) appsv1alpha1.CloneSetCondition {
	for _, c := range cs.Status.Conditions {
		if c.Type == appsv1alpha1.CloneSetConditionProgressing {
			return c
		}
	}
	return appsv1alpha1.CloneSetCondition{}
}

// progressDeadlineSeconds: a rollout stuck on a bad image (its containers never run again) is
// reported as ProgressDeadlineExceeded, with a Warning event, after the deadline; paused time does
// not count; a good image finishes the rollout and the CloneSet reports itself available.
func TestCloneSetProgressDeadline(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const deadline = 4
	clone := newCloneSet(ns, "stuck", 4, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	clone.Spec.ProgressDeadlineSeconds = ptr.To[int32](deadline)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "stuck", "available", func(cs *appsv1alpha1.CloneSet) bool {
		return progressing(cs).Reason == cloneset.ReasonProgressAvailable
	})

	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:broken"}]}}}}`)
	start := time.Now()
	waitCloneSet(t, c, ns, "stuck", "progressing", func(cs *appsv1alpha1.CloneSet) bool {
		return progressing(cs).Reason == cloneset.ReasonProgressUpdated
	})
	got := waitCloneSet(t, c, ns, "stuck", "deadline exceeded", func(cs *appsv1alpha1.CloneSet) bool {
		return progressing(cs).Reason == cloneset.ReasonProgressDeadlineExceeded
	})
	took := time.Since(start)
	if p := progressing(got); p.Status != corev1.ConditionFalse || took < (deadline-1)*time.Second {
		t.Errorf("condition %+v after %.1fs; want False after the %ds deadline", p, took.Seconds(), deadline)
	}
	t.Logf("stuck rollout reported after %.1fs: %s", took.Seconds(), progressing(got).Message)
	harness.Eventually(t, 10*time.Second, "a ProgressDeadlineExceeded event", func() (bool, string) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == cloneset.ReasonProgressDeadlineExceeded && e.Type == corev1.EventTypeWarning && e.Regarding.Name == "stuck" {
				return true, e.Note
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	if n := countImages(t, ns, "stuck"); n["registry.example/app:broken"] != 1 || n["registry.example/app:v1"] != 3 {
		t.Errorf("images %v; want 1 pod on the broken image (maxUnavailable 1) and 3 on v1", n)
	}

	// Paused time does not count: paused longer than the deadline, then resumed, the rollout is
	// progressing afresh before it is exceeded again.
	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"paused":true}}}`)
	waitCloneSet(t, c, ns, "stuck", "paused", func(cs *appsv1alpha1.CloneSet) bool {
		return progressing(cs).Reason == cloneset.ReasonProgressPaused
	})
	time.Sleep((deadline + 2) * time.Second)
	patchCloneSet(t, c, clone, `{"spec":{"updateStrategy":{"paused":false}}}`)
	resumed := waitCloneSet(t, c, ns, "stuck", "resumed", func(cs *appsv1alpha1.CloneSet) bool {
		return progressing(cs).Reason != cloneset.ReasonProgressPaused
	})
	if p := progressing(resumed); p.Reason != cloneset.ReasonProgressUpdated || p.Message != "CloneSet is progressing" {
		t.Errorf("after resuming: %+v; want %s, CloneSet is progressing", p, cloneset.ReasonProgressUpdated)
	}

	patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
	waitCloneSet(t, c, ns, "stuck", "rolled out to a good image and available", func(cs *appsv1alpha1.CloneSet) bool {
		return harness.RolledOut(4)(cs) && progressing(cs).Reason == cloneset.ReasonProgressAvailable
	})
}
