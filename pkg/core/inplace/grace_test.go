package inplace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func opsOf(t *testing.T, data []byte) []string {
	t.Helper()
	var ops []map[string]any
	if err := json.Unmarshal(data, &ops); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, op := range ops {
		out = append(out, op["op"].(string)+" "+op["path"].(string))
	}
	return out
}

func gracePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{RevisionLabel: "r1"}, Annotations: map[string]string{"keep": "1"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a:1"}, {Name: "side", Image: "s:1"}}},
	}
}

func TestDeferPatchMovesOnlyTheRevision(t *testing.T) {
	d := &Deferred{UpdateSpec: UpdateSpec{Revision: "r2", ContainerImages: map[string]string{"app": "a:2"},
		Labels: map[string]*string{"x": ptr.To("1")}}, GraceSeconds: 5}
	data, err := DeferPatch(gracePod(), d, &appspub.InPlaceUpdateState{Revision: "r2"}, Options{}.RevisionLabels("r2"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"test /metadata/labels/controller-revision-hash", "add /metadata/labels/controller-revision-hash",
		"add /metadata/annotations/apps.kruise.io~1inplace-update-grace", "add /metadata/annotations/apps.kruise.io~1inplace-update-state"}
	if got := opsOf(t, data); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(string(data), `\"graceSeconds\":5`) || !strings.Contains(string(data), `\"containerImages\":{\"app\":\"a:2\"}`) {
		t.Errorf("the grace annotation does not record the update: %s", data)
	}
}

func TestResumePatchAppliesTheRecordedUpdate(t *testing.T) {
	pod := gracePod()
	d := &Deferred{UpdateSpec: UpdateSpec{Revision: "r2", ContainerImages: map[string]string{"app": "a:2"},
		Labels: map[string]*string{"x": ptr.To("1")}}, GraceSeconds: 5}
	raw, _ := json.Marshal(d)
	pod.Labels[RevisionLabel] = "r2"
	pod.Annotations[appspub.InPlaceUpdateGraceKey] = string(raw)
	got, err := DeferredOf(pod)
	if err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("DeferredOf = %+v, %v; want %+v", got, err, d)
	}
	if due := got.Due(metav1.Now().Time); due.IsZero() {
		t.Error("no due time")
	}
	data, err := ResumePatch(pod, got)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"test /metadata/annotations/apps.kruise.io~1inplace-update-grace",
		"test /spec/containers/0/name", "test /spec/containers/0/image", "replace /spec/containers/0/image",
		"add /metadata/labels/x", "remove /metadata/annotations/apps.kruise.io~1inplace-update-grace"}
	if got := opsOf(t, data); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	delete(pod.Annotations, appspub.InPlaceUpdateGraceKey)
	if _, err := ResumePatch(pod, got); err == nil {
		t.Error("a resume patch was built for a pod without a deferred update")
	}
	pod.Annotations[appspub.InPlaceUpdateGraceKey] = "{"
	if _, err := DeferredOf(pod); err == nil {
		t.Error("an unreadable grace annotation was accepted")
	}
}

func TestThenGoesStraightFromTheRunningContainers(t *testing.T) {
	pod := gracePod() // runs app a:1, side s:1; r1 → r2 (app a:2) is pending
	pending := &UpdateSpec{Revision: "r2", ContainerImages: map[string]string{"app": "a:2"}, Labels: map[string]*string{"x": ptr.To("1")}}
	// r2 → r3 changes side: both containers change.
	both := pending.Then(&UpdateSpec{Revision: "r3", ContainerImages: map[string]string{"side": "s:2"}}, pod)
	if both.Revision != "r3" || !reflect.DeepEqual(both.ContainerImages, map[string]string{"app": "a:2", "side": "s:2"}) ||
		*both.Labels["x"] != "1" {
		t.Errorf("r1→r2 pending then r2→r3 = %+v", both)
	}
	// r2 → r1 (the template reverted): app goes back to the image it runs, so nothing restarts.
	back := pending.Then(&UpdateSpec{Revision: "r1", ContainerImages: map[string]string{"app": "a:1"}, Labels: map[string]*string{"x": nil}}, pod)
	if back.Revision != "r1" || back.ContainerImages != nil || back.Labels["x"] != nil {
		t.Errorf("r1→r2 pending then r2→r1 = %+v; want no container change and x removed", back)
	}
}

// The grace annotation OpenKruise v1.9.0 wrote on a pod of the takeover fixture is read, and
// written back byte for byte.
func TestDeferredInOpenKruiseForm(t *testing.T) {
	const openKruise = `{"revision":"cs-grace-7cf7bb8667","containerImages":{"app":"example.com/app:v2"},"metaDataPatch":"eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsidGllciI6ImdvbGQifX19","graceSeconds":3600}`
	pod := gracePod()
	pod.Annotations[appspub.InPlaceUpdateGraceKey] = openKruise
	d, err := DeferredOf(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &Deferred{UpdateSpec: UpdateSpec{Revision: "cs-grace-7cf7bb8667", ContainerImages: map[string]string{"app": "example.com/app:v2"},
		Labels: map[string]*string{"tier": ptr.To("gold")}}, GraceSeconds: 3600}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("DeferredOf = %+v, want %+v", d, want)
	}
	raw, err := json.Marshal(d)
	if err != nil || string(raw) != openKruise {
		t.Errorf("written back as %s (%v), want %s", raw, err, openKruise)
	}
	// Earlier Kruise annotations (labels, annotations, envFromMetadataContainers) still read.
	pod.Annotations[appspub.InPlaceUpdateGraceKey] = `{"revision":"r2","labels":{"x":"1"},"envFromMetadataContainers":["app"],"graceSeconds":5}`
	if d, err = DeferredOf(pod); err != nil || *d.Labels["x"] != "1" || !reflect.DeepEqual(d.EnvFromMetadataContainers, []string{"app"}) {
		t.Errorf("earlier form read as %+v (%v)", d, err)
	}
	env := &Deferred{UpdateSpec: UpdateSpec{Revision: "r2", EnvFromMetadataContainers: []string{"app"}}, GraceSeconds: 5}
	raw, _ = json.Marshal(env)
	if string(raw) != `{"revision":"r2","containerRefMetadata":{"app":{}},"updateEnvFromMetadata":true,"graceSeconds":5}` {
		t.Errorf("env-only update written as %s", raw)
	}
}
