package statefulset

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// preDownloadSet is set "web" rolling app:v1 (revision web-old) → app:v2 (web-new), with the
// observation observe would make of it for spec s.
func preDownloadSet(t *testing.T, s v1beta1.StatefulSetSpec) (*v1beta1.StatefulSet, *observation) {
	t.Helper()
	set := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "set-uid"}, Spec: s}
	revs := map[string]*appsv1.ControllerRevision{}
	for name, image := range map[string]string{"web-old": "app:v1", "web-new": "app:v2"} {
		tpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
		rev, err := revision.New(set, gvk, revision.Input{Template: tpl}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		rev.Name = name
		revs[name] = rev
	}
	set.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v2"}}}}
	return set, &observation{snap: snap(s), revisions: revs, updateRevision: revs["web-new"]}
}

// OpenKruise's skip rules as it reads an Advanced StatefulSet: OnDelete and podUpdatePolicy
// ReCreate (the default) rule pre-download out; partition as the spec's number; maxUnavailable
// rounded down.
func TestPreDownloadSkipRules(t *testing.T) {
	inPlace := podPolicy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)
	parallel := appsv1.ParallelPodManagement
	for _, tc := range []struct {
		name    string
		spec    v1beta1.StatefulSetSpec
		inPlace bool
		skipped bool
	}{
		{"in place, 5 pods, one at a time", spec(5, parallel, inPlace), true, false},
		{"InPlaceOnly", spec(5, parallel, podPolicy(v1beta1.InPlaceOnlyStatefulSetPodUpdatePolicy)), true, false},
		{"ReCreate, the default", spec(5, parallel), true, true},
		{"OnDelete", spec(5, parallel, inPlace, func(s *v1beta1.StatefulSetSpec) {
			s.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
		}), true, true},
		{"3 replicas", spec(3, parallel, inPlace), true, true},
		{"one batch", spec(5, parallel, inPlace, maxUnavailable(intstr.FromString("100%"))), true, true},
		{"one batch, but a partition", spec(5, parallel, inPlace, maxUnavailable(intstr.FromInt32(5)), partition(1)), true, false},
		{"99% of 5 rounds down to 4", spec(5, parallel, inPlace, maxUnavailable(intstr.FromString("99%"))), true, false},
		{"not in place", spec(5, parallel, inPlace), false, true},
	} {
		set, obs := preDownloadSet(t, tc.spec)
		if !tc.inPlace {
			obs.snap.InPlace = map[string]inplace.Decision{"web-old": {RecreateReasons: []string{"spec.volumes changed"}}}
		}
		d, err := predownload.Decide(preDownloadInput(set, obs))
		if err != nil {
			t.Fatal(err)
		}
		if (d.Label == predownload.IgnoredLabel) != tc.skipped || (d.Label == predownload.CreatedLabel) == tc.skipped {
			t.Errorf("%s: decision %+v, want skipped %v", tc.name, d, tc.skipped)
		}
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// An in-place update of a set of 5 gets one ImagePullJob per changed image, owned by the set,
// selecting its pods not at the update revision; the revision is labelled; once the rollout is
// done (current revision = update revision) the job is deleted.
func TestSyncPreDownload(t *testing.T) {
	ctx := context.Background()
	set, obs := preDownloadSet(t, spec(5, appsv1.ParallelPodManagement, podPolicy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)))
	for _, rev := range obs.revisions {
		rev.Namespace = "ns"
	}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(set, obs.revisions["web-old"], obs.revisions["web-new"]).Build()
	rec := events.NewFakeRecorder(10)
	r := &Reconciler{Base: workloadloop.Base{Client: c, Recorder: rec}}
	sh := workloadloop.Shared{Client: c, Recorder: rec, PreDownload: true}
	if err := workloadloop.SyncPreDownload(ctx, sh, kind{r}, set, obs); err != nil {
		t.Fatal(err)
	}
	var jobs v1beta1.ImagePullJobList
	if err := c.List(ctx, &jobs); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("%d jobs, want one for container app", len(jobs.Items))
	}
	j := &jobs.Items[0]
	ref := metav1.GetControllerOf(j)
	if j.Name != "web-new-app" || j.Spec.Image != "app:v2" || ref == nil || ref.Kind != "StatefulSet" || ref.APIVersion != "apps.kruise.io/v1beta1" || ref.UID != "set-uid" {
		t.Errorf("job %s for %s controlled by %+v, want web-new-app for app:v2 controlled by the set", j.Name, j.Spec.Image, ref)
	}
	sel, err := metav1.LabelSelectorAsSelector(&j.Spec.PodSelector.LabelSelector)
	if err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]bool{"web-old": true, "web-new": false} {
		if got := sel.Matches(labels.Set{"app": "web", inplace.RevisionLabel: rev}); got != want {
			t.Errorf("pod at %s selected %v, want %v", rev, got, want)
		}
	}
	if e := <-rec.Events; !strings.Contains(e, "CreatedImagePullJob") {
		t.Errorf("event %q, want CreatedImagePullJob", e)
	}
	updated := &appsv1.ControllerRevision{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web-new"}, updated); err != nil {
		t.Fatal(err)
	}
	if _, ok := updated.Labels[predownload.CreatedLabel]; !ok {
		t.Errorf("revision labels %v, want %s", updated.Labels, predownload.CreatedLabel)
	}

	obs.snap.CurrentRevision = "web-new" // every pod updated
	if err := workloadloop.SyncPreDownload(ctx, sh, kind{r}, set, obs); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &jobs); err != nil || len(jobs.Items) != 0 {
		t.Errorf("jobs %d (%v) after the rollout, want none", len(jobs.Items), err)
	}
}
