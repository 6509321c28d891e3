package nodeimage

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Unanswered fails, as OpenKruise's controller does, a tag the daemon has not reported at its
// version a minute after createdAt, and an unfinished one past activeDeadlineSeconds plus that
// minute; it waits for the others and says when the next is due.
func TestUnanswered(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { m := metav1.NewTime(now.Add(-d)); return &m }
	deadline := func(s int64) *v1beta1.NodeImageTagPullPolicy {
		return &v1beta1.NodeImageTagPullPolicy{ActiveDeadlineSeconds: ptr.To(s)}
	}
	job := corev1.ObjectReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "ImagePullJob", Namespace: "ns", Name: "pull"}
	ni := &v1beta1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: "node-a"},
		Spec: v1beta1.NodeImageSpec{Images: map[string]v1beta1.NodeImageImageSpec{"app": {Tags: []v1beta1.NodeImageTagSpec{
			{Tag: "silent", Version: 1, CreatedAt: ago(61 * time.Second), OwnerReferences: []corev1.ObjectReference{job}},
			{Tag: "young", Version: 1, CreatedAt: ago(50 * time.Second)},                           // due in 10 s
			{Tag: "stale", Version: 2, CreatedAt: ago(2 * time.Minute)},                            // reported at version 1 only
			{Tag: "slow", Version: 1, CreatedAt: ago(100 * time.Second), PullPolicy: deadline(30)}, // 30 + 60 < 100
			{Tag: "busy", Version: 1, CreatedAt: ago(80 * time.Second), PullPolicy: deadline(30)},  // due in 10 s
			{Tag: "done", Version: 1, CreatedAt: ago(time.Hour), PullPolicy: deadline(1)},
			{Tag: "legacy", Version: 1}, // no createdAt: left alone
		}}}},
		Status: v1beta1.NodeImageStatus{ImageStatuses: map[string]v1beta1.NodeImageImageStatus{"app": {Tags: []v1beta1.NodeImageTagStatus{
			{Tag: "stale", Version: 1, Phase: v1beta1.NodeImagePullSucceeded, CompletionTime: ago(time.Hour)},
			{Tag: "slow", Version: 1, Phase: v1beta1.NodeImagePullPulling, StartTime: ago(90 * time.Second), Progress: 40},
			{Tag: "busy", Version: 1, Phase: v1beta1.NodeImagePullPulling},
			{Tag: "done", Version: 1, Phase: v1beta1.NodeImagePullSucceeded, CompletionTime: ago(time.Minute)},
		}}}},
	}
	st, failures, next := Unanswered(ni, now)
	if st == nil {
		t.Fatal("nothing failed")
	}
	want := map[string]string{"silent": NotRespondedMessage, "stale": NotRespondedMessage, "slow": DeadlineExceedMessage}
	if len(failures) != len(want) {
		t.Errorf("failures %+v, want %v", failures, want)
	}
	for _, f := range failures {
		if want[f.Tag] != f.Message {
			t.Errorf("failure %+v, want message %q", f, want[f.Tag])
		}
	}
	if next != 10*time.Second {
		t.Errorf("next %s, want 10s", next)
	}
	phases := map[string]v1beta1.NodeImageTagStatus{}
	for _, ts := range st.ImageStatuses["app"].Tags {
		phases[ts.Tag] = ts
	}
	for tag := range want {
		if ts := phases[tag]; ts.Phase != v1beta1.NodeImagePullFailed || ts.Version != 1+map[string]int64{"stale": 1}[tag] || ts.CompletionTime == nil {
			t.Errorf("status of %s: %+v", tag, ts)
		}
	}
	if ts := phases["slow"]; ts.Progress != 40 || ts.StartTime == nil {
		t.Errorf("a failed pull keeps its start and progress: %+v", ts)
	}
	if st.Desired != 7 || st.Failed != 3 || st.Succeeded != 1 || st.Pulling != 1 || st.Waiting != 2 {
		t.Errorf("counts: desired %d failed %d succeeded %d pulling %d waiting %d", st.Desired, st.Failed, st.Succeeded, st.Pulling, st.Waiting)
	}
	if len(ni.Status.ImageStatuses["app"].Tags) != 4 || ni.Status.Failed != 0 {
		t.Errorf("the NodeImage itself was changed: %+v", ni.Status)
	}
	if msg := failureEvent(failures[0], ni.Name); msg != "Failed to pull image app:silent on node node-a for node has not responded for a long time" {
		t.Errorf("event %q", msg)
	}

	// Once answered, nothing more fails.
	ni.Status = *st
	if again, more, _ := Unanswered(ni, now); again != nil || more != nil {
		t.Errorf("a second pass fails %+v", more)
	}
}
