package cloneset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/inplace"
)

func TestPreDownloadJobs(t *testing.T) {
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u",
		Annotations: map[string]string{v1alpha1.ImagePreDownloadParallelismKey: "3", v1alpha1.ImagePreDownloadMinUpdatedReadyPods: "1"}},
		Spec: v1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	tpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "reg"}},
		Containers: []corev1.Container{{Name: "app", Image: "app:v2"}, {Name: "side", Image: "side:v1"}}}}
	pod := func(rev, app string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{inplace.RevisionLabel: rev}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: app}, {Name: "side", Image: "side:v1"}}}}
	}
	pods := []*corev1.Pod{pod("web-new", "app:v2"), pod("web-old", "app:v1"), pod("web-old", "app:v1")}
	if PreDownloadStarts(cs) {
		t.Fatal("pre-download starts before one updated pod is ready (min-updated-ready-pods 1)")
	}
	cs.Status.UpdatedReadyReplicas = 1
	if !PreDownloadStarts(cs) {
		t.Fatal("pre-download does not start with one updated pod ready")
	}
	jobs := PreDownloadJobs(cs, "web-new", tpl, pods)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want one for app:v2 (side:v1 runs already)", len(jobs))
	}
	j := jobs[0]
	if j.Spec.Image != "app:v2" || j.Spec.Parallelism.IntValue() != 3 || *j.Spec.PullPolicy.TimeoutSeconds != 600 ||
		len(j.Spec.PullSecrets) != 1 || j.Spec.PodSelector.MatchLabels["app"] != "web" || metav1.GetControllerOf(j).UID != "u" {
		t.Errorf("job %+v", j)
	}
	if again := PreDownloadJobs(cs, "web-new", tpl, pods); again[0].Name != j.Name {
		t.Errorf("job names differ between calls: %s, %s", j.Name, again[0].Name)
	}
	if none := PreDownloadJobs(cs, "web-new", tpl, pods[:1]); len(none) != 0 {
		t.Errorf("%d jobs when every pod is updated", len(none))
	}
}

// min-updated-ready-pods is a number or a percentage of spec.replicas, rounded up (OpenKruise's
// reading).
func TestPreDownloadStartsPercent(t *testing.T) {
	replicas := int32(5)
	for _, tc := range []struct {
		value   string
		ready   int32
		started bool
	}{
		{"50%", 2, false}, {"50%", 3, true}, {"0%", 0, true}, {"100%", 4, false}, {"100%", 5, true}, {"2", 1, false}, {"2", 2, true},
	} {
		cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.ImagePreDownloadMinUpdatedReadyPods: tc.value}},
			Spec: v1alpha1.CloneSetSpec{Replicas: &replicas}, Status: v1alpha1.CloneSetStatus{UpdatedReadyReplicas: tc.ready}}
		if got := PreDownloadStarts(cs); got != tc.started {
			t.Errorf("%s of 5 with %d updated ready: starts %v, want %v", tc.value, tc.ready, got, tc.started)
		}
	}
}
