package cloneset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/inplace"
	"github.com/kruise-ng/kruise/pkg/revision"
)

// One job per container whose image the update changes, named <revision>-<container>, for the
// pods not at the update revision (OpenKruise's jobs, so either manager finds the other's).
func TestPreDownloadJobs(t *testing.T) {
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u",
		Annotations: map[string]string{v1alpha1.ImagePreDownloadParallelismKey: "3"}},
		Spec: v1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	tpl := func(app string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "reg"}},
				Containers: []corev1.Container{{Name: "app", Image: app}, {Name: "side", Image: "side:v1"}}}}
	}
	update := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "web-5d8f9c", Labels: map[string]string{revision.HashLabel: "5d8f9c"}}}
	jobs := PreDownloadJobs(cs, update, tpl("app:v1"), tpl("app:v2"))
	if len(jobs) != 1 {
		t.Fatalf("%d jobs, want one for container app (side:v1 does not change)", len(jobs))
	}
	j := jobs[0]
	if j.Name != "web-5d8f9c-app" || j.Spec.Image != "app:v2" || j.Spec.Parallelism.IntValue() != 3 || *j.Spec.PullPolicy.TimeoutSeconds != 300 ||
		*j.Spec.CompletionPolicy.TTLSecondsAfterFinished != 600 || len(j.Spec.PullSecrets) != 1 || metav1.GetControllerOf(j).UID != "u" ||
		j.Labels[revision.HashLabel] != "5d8f9c" {
		t.Errorf("job %+v", j)
	}
	sel, err := metav1.LabelSelectorAsSelector(&j.Spec.PodSelector.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	for label, want := range map[string]bool{"web-1": true, "web-5d8f9c": false, "5d8f9c": false} {
		if got := sel.Matches(labels.Set{"app": "web", inplace.RevisionLabel: label}); got != want {
			t.Errorf("pod at %s selected %v, want %v", label, got, want)
		}
	}
}

// OpenKruise's skip rules.
func TestPreDownloadSkip(t *testing.T) {
	spec := func(replicas int32, typ v1alpha1.CloneSetUpdateStrategyType, partition, maxUnavailable string) *v1alpha1.CloneSetSpec {
		cs := &v1alpha1.CloneSet{Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To(replicas), UpdateStrategy: v1alpha1.CloneSetUpdateStrategy{
			Type: typ, Partition: ptr.To(intstr.Parse(partition)), MaxUnavailable: ptr.To(intstr.Parse(maxUnavailable))}}}
		defaults.SetDefaultsCloneSet(cs)
		return &cs.Spec
	}
	inPlace := v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
	for _, tc := range []struct {
		name    string
		spec    *v1alpha1.CloneSetSpec
		inPlace bool
		skipped bool
	}{
		{"in place, 5 pods, 20%", spec(5, inPlace, "0", "20%"), true, false},
		{"ReCreate", spec(5, v1alpha1.RecreateCloneSetUpdateStrategyType, "0", "20%"), true, true},
		{"3 replicas", spec(3, inPlace, "0", "20%"), true, true},
		{"one batch", spec(5, inPlace, "0", "100%"), true, true},
		{"one batch, but a partition", spec(5, inPlace, "1", "100%"), true, false},
		{"not in place", spec(5, inPlace, "0", "20%"), false, true},
	} {
		if got := PreDownloadSkip(tc.spec, tc.inPlace); (got != "") != tc.skipped {
			t.Errorf("%s: skip %q, want skipped %v", tc.name, got, tc.skipped)
		}
	}
}

// min-updated-ready-pods is a number or a percentage of spec.replicas, rounded up (OpenKruise's
// reading); counts of an older update revision count as none.
func TestPreDownloadStarts(t *testing.T) {
	replicas := int32(5)
	for _, tc := range []struct {
		value   string
		ready   int32
		started bool
	}{
		{"50%", 2, false}, {"50%", 3, true}, {"0%", 0, true}, {"100%", 4, false}, {"100%", 5, true}, {"2", 1, false}, {"2", 2, true},
	} {
		cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1alpha1.ImagePreDownloadMinUpdatedReadyPods: tc.value}},
			Spec: v1alpha1.CloneSetSpec{Replicas: &replicas}, Status: v1alpha1.CloneSetStatus{UpdatedReadyReplicas: tc.ready, UpdateRevision: "r2"}}
		if got := PreDownloadStarts(cs, "r2"); got != tc.started {
			t.Errorf("%s of 5 with %d updated ready: starts %v, want %v", tc.value, tc.ready, got, tc.started)
		}
		if tc.ready > 0 && PreDownloadStarts(cs, "r3") && tc.value != "0%" {
			t.Errorf("%s: counts of revision r2 count for r3", tc.value)
		}
	}
	if !PreDownloadStarts(&v1alpha1.CloneSet{}, "r2") {
		t.Error("without the annotation the pre-download waits for nothing")
	}
}
