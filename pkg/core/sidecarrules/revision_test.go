package sidecarrules

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// revisionOf is the ControllerRevision OpenKruise would have recorded for set.
func revisionOf(t *testing.T, set *v1beta1.SidecarSet, number int64, customVersion string) *appsv1.ControllerRevision {
	t.Helper()
	data, err := RevisionData(&set.Spec)
	if err != nil {
		t.Fatal(err)
	}
	name, err := RevisionName(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash, _ := Hash(&set.Spec)
	noImage, _ := HashWithoutImage(&set.Spec)
	labels := map[string]string{RevisionOwnerLabel: set.Name}
	if customVersion != "" {
		labels[CustomVersionLabel] = customVersion
	}
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels,
			Annotations: map[string]string{HashAnnotation: hash, HashWithoutImageAnnotation: noImage}},
		Data:     runtime.RawExtension{Raw: data},
		Revision: number,
	}
}

func TestRevisionDataRoundTrip(t *testing.T) {
	old := newSet("s", sidecar("log", "log:1"))
	old.Spec.Volumes = []corev1.Volume{emptyDir("v")}
	old.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "reg"}}
	data, err := RevisionData(&old.Spec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"$patch":"replace","containers":[{"image":"log:1","name":"log","podInjectPolicy":"BeforeAppContainer","resources":{},"shareVolumePolicy":{},"upgradeStrategy":{}}],"imagePullSecrets":[{"name":"reg"}],"initContainers":null,"patchPodMetadata":null,"volumes":[{"emptyDir":{},"name":"v"}]}}`
	if string(data) != want {
		t.Errorf("RevisionData:\n got %s\nwant %s", data, want)
	}
	latest := newSet("s", sidecar("log", "log:2"))
	latest.Annotations = map[string]string{HashAnnotation: "latest"}
	restored, err := RestoreRevision(latest, revisionOf(t, old, 1, ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := restored.Spec.Containers[0].Image; got != "log:1" {
		t.Errorf("restored image %s", got)
	}
	if h, _ := Hash(&old.Spec); restored.Annotations[HashAnnotation] != h {
		t.Errorf("restored hash %s, want the revision's %s", restored.Annotations[HashAnnotation], h)
	}
	if restored.Spec.Selector != nil || latest.Annotations[HashAnnotation] != "latest" {
		t.Errorf("restore must replace the spec and leave latest alone")
	}
}

func TestFindRevision(t *testing.T) {
	set := newSet("s", sidecar("log", "log:1"))
	v1, v1b, v2 := revisionOf(t, set, 1, "v1"), revisionOf(t, set, 3, "v1"), revisionOf(t, set, 2, "v2")
	v1.Name, v1b.Name, v2.Name = "s-a", "s-b", "s-c"
	foreign := revisionOf(t, set, 9, "v1")
	foreign.Labels[RevisionOwnerLabel] = "other"
	revs := []*appsv1.ControllerRevision{v1, v1b, v2, foreign}
	if r, err := FindRevision(set, &v1beta1.SidecarSetInjectRevision{CustomVersion: ptrTo("v1")}, revs); err != nil || r != v1b {
		t.Errorf("customVersion v1 = %v, %v; want the newest of this SidecarSet's, s-b", r, err)
	}
	if r, err := FindRevision(set, &v1beta1.SidecarSetInjectRevision{RevisionName: ptrTo("s-c")}, revs); err != nil || r != v2 {
		t.Errorf("revisionName s-c = %v, %v", r, err)
	}
	if _, err := FindRevision(set, &v1beta1.SidecarSetInjectRevision{RevisionName: ptrTo("gone")}, revs); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("missing revision: err = %v", err)
	}
}

// TestInjectPinnedRevision: which revision a new pod gets under injectionStrategy.revision.
func TestInjectPinnedRevision(t *testing.T) {
	old := newSet("s", sidecar("log", "log:1"))
	rev := revisionOf(t, old, 1, "")
	pinned := func(policy v1beta1.SidecarSetInjectRevisionPolicy, edit func(*v1beta1.SidecarSet)) *v1beta1.SidecarSet {
		s := newSet("s", sidecar("log", "log:2"))
		s.Spec.InjectionStrategy.Revision = &v1beta1.SidecarSetInjectRevision{RevisionName: ptrTo(rev.Name), Policy: policy}
		if edit != nil {
			edit(s)
		}
		return s
	}
	percent := func(p string) func(*v1beta1.SidecarSet) {
		return func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.Partition = ptrTo(intstr.FromString(p)) }
	}
	draw := func(v float64) func() float64 { return func() float64 { return v } }
	cases := []struct {
		name  string
		set   *v1beta1.SidecarSet
		draw  func() float64
		image string
	}{
		{"Always injects the pinned revision", pinned(v1beta1.SidecarSetAlwaysRevisionPolicy, nil), nil, "log:1"},
		{"Partial, paused update: pinned", pinned(v1beta1.SidecarSetPartialRevisionPolicy, func(s *v1beta1.SidecarSet) { s.Spec.UpdateStrategy.Paused = true }), nil, "log:1"},
		{"Partial, update selector misses the pod: pinned", pinned(v1beta1.SidecarSetPartialRevisionPolicy, func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
		}), nil, "log:1"},
		{"Partial, integer partition: latest", pinned(v1beta1.SidecarSetPartialRevisionPolicy, func(s *v1beta1.SidecarSet) {
			s.Spec.UpdateStrategy.Partition = ptrTo(intstr.FromInt32(5))
		}), draw(0), "log:2"},
		{"Partial, draw within the partition: pinned", pinned(v1beta1.SidecarSetPartialRevisionPolicy, percent("30%")), draw(0.3), "log:1"},
		{"Partial, draw above the partition: latest", pinned(v1beta1.SidecarSetPartialRevisionPolicy, percent("30%")), draw(0.31), "log:2"},
		{"Partial, no draw: latest", pinned(v1beta1.SidecarSetPartialRevisionPolicy, percent("100%")), nil, "log:2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Now: testNow, Draw: tc.draw, Revisions: map[string][]*appsv1.ControllerRevision{"s": {rev}}}
			res, err := Inject(appPod(), []*v1beta1.SidecarSet{tc.set}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Pod.Spec.Containers[0].Image; got != tc.image {
				t.Errorf("injected %s, want %s", got, tc.image)
			}
			specs, _ := PodUpgradeSpecs(res.Pod, HashAnnotation)
			if tc.image == "log:1" && specs["s"].ControllerRevision != rev.Name {
				t.Errorf("pinned injection records revision %q, want %s", specs["s"].ControllerRevision, rev.Name)
			}
		})
	}
	if _, err := Inject(appPod(), []*v1beta1.SidecarSet{pinned("", nil)}, Options{}); err == nil {
		t.Errorf("a pinned revision that cannot be found must refuse the pod")
	}
}
