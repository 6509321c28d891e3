package predownload

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

var ownerGVK = v1alpha1.GroupVersion.WithKind("CloneSet")

func template(app string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "reg"}},
			Containers: []corev1.Container{{Name: "app", Image: app}, {Name: "side", Image: "side:v1"}}}}
}

// rev is a revision of owner recording template tpl, renamed name.
func rev(t *testing.T, owner metav1.Object, name string, tpl *corev1.PodTemplateSpec) *appsv1.ControllerRevision {
	t.Helper()
	r, err := revision.New(owner, ownerGVK, revision.Input{Template: tpl}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Name = name
	return r
}

// input is a 5-pod in-place update of web from app:v1 (revision web-1) to app:v2 (web-5d8f9c) that
// is pre-downloaded, changed by mut.
func input(t *testing.T, mut ...func(*Input)) Input {
	owner := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u", Annotations: map[string]string{}}}
	update := rev(t, owner, "web-5d8f9c", template("app:v2"))
	update.Labels[revision.HashLabel] = "5d8f9c"
	in := Input{Owner: owner, GVK: ownerGVK, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Replicas: 5, MaxUnavailable: 1, InPlace: true, Current: rev(t, owner, "web-1", template("app:v1")), Update: update}
	for _, m := range mut {
		m(&in)
	}
	return in
}

func decide(t *testing.T, in Input) Decision {
	t.Helper()
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// One job per container whose image the update changes, named <revision>-<container>, for the
// pods not at the update revision (OpenKruise's jobs, so either manager finds the other's).
func TestJobs(t *testing.T) {
	d := decide(t, input(t, func(in *Input) {
		in.Owner.SetAnnotations(map[string]string{v1alpha1.ImagePreDownloadParallelismKey: "3"})
	}))
	if d.Label != CreatedLabel || len(d.Jobs) != 1 {
		t.Fatalf("decision %+v, want one job for container app (side:v1 does not change), labelled created", d)
	}
	j := d.Jobs[0]
	if j.Namespace != "ns" || j.Name != "web-5d8f9c-app" || j.Spec.Image != "app:v2" || j.Spec.Parallelism.IntValue() != 3 ||
		*j.Spec.PullPolicy.TimeoutSeconds != 300 || *j.Spec.PullPolicy.BackoffLimit != 1 ||
		*j.Spec.CompletionPolicy.TTLSecondsAfterFinished != 600 || len(j.Spec.PullSecrets) != 1 ||
		j.Labels[revision.HashLabel] != "5d8f9c" || j.Labels["app"] != "web" || j.Spec.SandboxConfig.Annotations["a"] != "1" {
		t.Errorf("job %+v", j)
	}
	if ref := metav1.GetControllerOf(j); ref == nil || ref.UID != "u" || ref.Kind != "CloneSet" {
		t.Errorf("job controller %+v, want the CloneSet", ref)
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

// OpenKruise's skip rules, in its order; a skipped revision is labelled ignored.
func TestSkip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mut     func(*Input)
		skipped bool
	}{
		{"in place, 5 pods, one at a time", func(*Input) {}, false},
		{"the strategy rules it out", func(in *Input) { in.StrategySkip = "the update type is ReCreate" }, true},
		{"3 replicas", func(in *Input) { in.Replicas = 3 }, true},
		{"4 replicas", func(in *Input) { in.Replicas = 4 }, false},
		{"one batch", func(in *Input) { in.MaxUnavailable = 5 }, true},
		{"one batch, but a partition", func(in *Input) { in.MaxUnavailable, in.Partition = 5, 1 }, false},
		{"not in place", func(in *Input) { in.InPlace = false }, true},
	} {
		d := decide(t, input(t, tc.mut))
		if (d.Skip != "") != tc.skipped || (d.Label == IgnoredLabel) != tc.skipped || tc.skipped && len(d.Jobs) > 0 {
			t.Errorf("%s: decision %+v, want skipped %v", tc.name, d, tc.skipped)
		}
	}
}

// min-updated-ready-pods is a number or a percentage of replicas, rounded up (OpenKruise's
// reading); counts of an older update revision count as none.
func TestStarts(t *testing.T) {
	for _, tc := range []struct {
		value   string
		ready   int32
		started bool
	}{
		{"50%", 2, false}, {"50%", 3, true}, {"0%", 0, true}, {"100%", 4, false}, {"100%", 5, true}, {"2", 1, false}, {"2", 2, true},
	} {
		in := input(t, func(in *Input) {
			in.Owner.SetAnnotations(map[string]string{v1alpha1.ImagePreDownloadMinUpdatedReadyPods: tc.value})
			in.UpdatedReady, in.StatusUpdateRevision = tc.ready, in.Update.Name
		})
		if got := starts(in); got != tc.started {
			t.Errorf("%s of 5 with %d updated ready: starts %v, want %v", tc.value, tc.ready, got, tc.started)
		}
		if d := decide(t, in); (d.Label != "") != tc.started {
			t.Errorf("%s of 5 with %d updated ready: decision %+v", tc.value, tc.ready, d)
		}
		in.StatusUpdateRevision = "web-older"
		if tc.ready > 0 && starts(in) && tc.value != "0%" {
			t.Errorf("%s: counts of revision web-older count for %s", tc.value, in.Update.Name)
		}
	}
	if !starts(input(t)) {
		t.Error("without the annotation the pre-download waits for nothing")
	}
}

// A revision is decided once; a finished rollout deletes the jobs; nothing is decided before the
// revisions are known.
func TestDecideOnce(t *testing.T) {
	for _, label := range []string{CreatedLabel, IgnoredLabel} {
		if d := decide(t, input(t, func(in *Input) { in.Update.Labels[label] = "true" })); d.Label != "" || d.DeleteJobs || len(d.Jobs) > 0 {
			t.Errorf("revision labelled %s decided again: %+v", label, d)
		}
	}
	if d := decide(t, input(t, func(in *Input) { in.Current = in.Update })); !d.DeleteJobs || d.Label != "" {
		t.Errorf("rollout done: %+v, want the jobs deleted", d)
	}
	if d := decide(t, input(t, func(in *Input) { in.Update = nil })); d.DeleteJobs || d.Label != "" {
		t.Errorf("no update revision yet: %+v, want nothing", d)
	}
}
