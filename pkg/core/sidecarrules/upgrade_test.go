package sidecarrules

import (
	"encoding/json"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Tests of the in-place sidecar upgrade (upgrade.go) against OpenKruise v1.9.0's
// sidecarcontrol (sidecarset_control.go, util.go) and its SidecarSet processor.

var (
	upT0  = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	upNow = metav1.NewTime(time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC))
)

func upContainer(name, image string) v1beta1.SidecarSetContainer {
	return v1beta1.SidecarSetContainer{Container: corev1.Container{Name: name, Image: image},
		PodInjectPolicy: v1beta1.SidecarSetBeforeAppContainer}
}

func upHot(name, image, empty string) v1beta1.SidecarSetContainer {
	c := upContainer(name, image)
	c.UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: empty}
	return c
}

// upSet is a SidecarSet name selecting app=web with the containers cs.
func upSet(name string, cs ...v1beta1.SidecarSetContainer) *v1beta1.SidecarSet {
	return &v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1beta1.SidecarSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Containers: cs}}
}

// upImage is set with container name's image changed (its spec otherwise unchanged).
func upImage(set *v1beta1.SidecarSet, name, image string) *v1beta1.SidecarSet {
	out := set.DeepCopy()
	for i := range out.Spec.Containers {
		if out.Spec.Containers[i].Name == name {
			out.Spec.Containers[i].Image = image
		}
	}
	return out
}

// upPod is an app=web pod into which Inject put sets at upT0, running and ready, each container
// reporting its spec image with the image ID "id-<container>-1" and ready.
func upPod(t *testing.T, sets ...*v1beta1.SidecarSet) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
	res, err := Inject(pod, sets, Options{Now: upT0})
	if err != nil {
		t.Fatalf("Inject: %v", err)
	}
	if len(res.Injected) != len(sets) {
		t.Fatalf("Inject injected %v, want all of %d SidecarSets", res.Injected, len(sets))
	}
	p := res.Pod
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses,
			corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "id-" + c.Name + "-1", Ready: true})
	}
	return p
}

func upStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

func upSpec(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

func upStates(t *testing.T, v string) map[string]*appspub.InPlaceUpdateState {
	t.Helper()
	out := map[string]*appspub.InPlaceUpdateState{}
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		t.Fatalf("in-place update state %q: %v", v, err)
	}
	return out
}

func upJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func upStr(s string) *string { return &s }

func upHash(t *testing.T, set *v1beta1.SidecarSet) string {
	t.Helper()
	h, err := SetHash(set)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPlanUpgrade: pod × SidecarSet → the images and annotations of the in-place upgrade.
func TestPlanUpgrade(t *testing.T) {
	old := upSet("s", upContainer("log", "log:1"), upHot("mesh", "mesh:1", "empty:1"))
	old.Status.LatestRevision = "s-rev1"
	other := upSet("other", upContainer("audit", "audit:1"))
	other.Status.LatestRevision = "other-rev7"
	next := upImage(upImage(old, "log", "log:2"), "mesh", "mesh:2")
	next.Status.LatestRevision = "s-rev2"

	type states = map[string]*appspub.InPlaceUpdateState
	cases := []struct {
		name string
		pod  func(*testing.T, *corev1.Pod)
		set  func() *v1beta1.SidecarSet
		// wantImages are the image changes; hot-upgrade sidecars are never among them.
		wantImages map[string]string
		// wantStates is the whole in-place update state annotation written, parsed.
		wantStates func(hash string) states
		// wantAnnotations are the other annotations written: a nil value must not be written.
		wantAnnotations map[string]*string
	}{{
		name:       "cold sidecar image changes, the hot-upgrade one is skipped; a new state entry records the old image ID",
		set:        func() *v1beta1.SidecarSet { return next },
		wantImages: map[string]string{"log": "log:2"},
		wantStates: func(hash string) states {
			return states{"s": {Revision: hash, UpdateTimestamp: upNow,
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: "id-log-1"}}}}
		},
		wantAnnotations: map[string]*string{InjectedListAnnotation: nil, HashWithoutImageAnnotation: nil},
	}, {
		name: "an existing state entry keeps its revision and time and merges the image IDs; other SidecarSets' entries stay",
		pod: func(t *testing.T, p *corev1.Pod) {
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, states{
				"other": {Revision: "o-hash", UpdateTimestamp: upT0,
					LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"audit": {ImageID: "audit-0"}}},
				"s": {Revision: "old-hash", UpdateTimestamp: upT0,
					LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"mesh-1": {ImageID: "mesh-0"}, "log": {ImageID: "log-0"}}},
			})
		},
		set:        func() *v1beta1.SidecarSet { return next },
		wantImages: map[string]string{"log": "log:2"},
		wantStates: func(string) states {
			return states{
				"other": {Revision: "o-hash", UpdateTimestamp: upT0,
					LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"audit": {ImageID: "audit-0"}}},
				"s": {Revision: "old-hash", UpdateTimestamp: upT0,
					LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"mesh-1": {ImageID: "mesh-0"}, "log": {ImageID: "id-log-1"}}},
			}
		},
	}, {
		name: "no image differs: no image change, the hash entry and an empty state entry are still written",
		set: func() *v1beta1.SidecarSet {
			s := upImage(old, "mesh", "mesh:9") // hot-upgrade only: nothing to do here
			s.Status.LatestRevision = "s-rev3"
			return s
		},
		wantImages: map[string]string{},
		wantStates: func(hash string) states {
			return states{"s": {Revision: hash, UpdateTimestamp: upNow, LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{}}}
		},
	}, {
		name:            "a pod without the injected list gets one naming the SidecarSet",
		pod:             func(_ *testing.T, p *corev1.Pod) { delete(p.Annotations, InjectedListAnnotation) },
		set:             func() *v1beta1.SidecarSet { return next },
		wantImages:      map[string]string{"log": "log:2"},
		wantAnnotations: map[string]*string{InjectedListAnnotation: upStr("s")},
	}, {
		name:            "an empty injected list counts as missing",
		pod:             func(_ *testing.T, p *corev1.Pod) { p.Annotations[InjectedListAnnotation] = "" },
		set:             func() *v1beta1.SidecarSet { return next },
		wantImages:      map[string]string{"log": "log:2"},
		wantAnnotations: map[string]*string{InjectedListAnnotation: upStr("s")},
	}, {
		name: "patchPodMetadata: Retain adds missing keys only, Overwrite replaces, MergePatchJson merges",
		pod: func(_ *testing.T, p *corev1.Pod) {
			p.Annotations["retain-old"] = "kept"
			p.Annotations["over"] = "o1"
			p.Annotations["merge"] = `{"a":1,"c":3}`
			p.Annotations["same"] = "v"
		},
		set: func() *v1beta1.SidecarSet {
			s := next.DeepCopy()
			s.Spec.PatchPodMetadata = []v1beta1.SidecarSetPatchPodMetadata{
				{Annotations: map[string]string{"retain-new": "r", "retain-old": "r2"}},
				{Annotations: map[string]string{"over": "o2", "same": "v"}, PatchPolicy: v1beta1.SidecarSetOverwritePatchPolicy},
				{Annotations: map[string]string{"merge": `{"b":2,"c":null}`, "merge-new": `{"x":1}`}, PatchPolicy: v1beta1.SidecarSetMergePatchJSONPatchPolicy},
			}
			return s
		},
		wantImages: map[string]string{"log": "log:2"},
		wantAnnotations: map[string]*string{
			"retain-new": upStr("r"), "retain-old": nil, "over": upStr("o2"), "same": nil,
			"merge": upStr(`{"a":1,"b":2}`), "merge-new": upStr(`{"x":1}`),
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := upPod(t, old, other)
			if tc.pod != nil {
				tc.pod(t, pod)
			}
			set := tc.set()
			before := pod.DeepCopy()
			up, err := PlanUpgrade(pod, set, upNow)
			if err != nil {
				t.Fatalf("PlanUpgrade: %v", err)
			}
			if !equality.Semantic.DeepEqual(pod, before) {
				t.Errorf("PlanUpgrade modified its input pod")
			}
			if !maps.Equal(up.Images, tc.wantImages) {
				t.Errorf("Images = %v, want %v", up.Images, tc.wantImages)
			}
			hash := upHash(t, set)

			// The hash entry of the SidecarSet is replaced; the other entries are kept byte for byte.
			gotHash := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{HashAnnotation: up.Annotations[HashAnnotation]}}}
			specs, err := PodUpgradeSpecs(gotHash, HashAnnotation)
			if err != nil {
				t.Fatalf("hash annotation %q: %v", up.Annotations[HashAnnotation], err)
			}
			want := UpgradeSpec{UpdateTimestamp: upNow, Hash: hash, SidecarSetName: "s", SidecarList: []string{"log", "mesh"},
				ControllerRevision: set.Status.LatestRevision}
			if !equality.Semantic.DeepEqual(specs["s"], want) {
				t.Errorf("hash entry = %+v, want %+v", specs["s"], want)
			}
			var oldRaw, newRaw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(pod.Annotations[HashAnnotation]), &oldRaw); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(up.Annotations[HashAnnotation]), &newRaw); err != nil {
				t.Fatal(err)
			}
			if len(newRaw) != 2 || string(newRaw["other"]) != string(oldRaw["other"]) {
				t.Errorf("other SidecarSet's hash entry = %s, want it unchanged: %s (all: %s)", newRaw["other"], oldRaw["other"], up.Annotations[HashAnnotation])
			}
			// Applying the annotations makes the pod Updated to set.
			applied := pod.DeepCopy()
			maps.Copy(applied.Annotations, up.Annotations)
			if !Updated(applied, set) {
				t.Errorf("pod with the planned annotations is not Updated to the SidecarSet")
			}

			if tc.wantStates != nil {
				got := upStates(t, up.Annotations[InplaceUpdateStateAnnotation])
				if w := tc.wantStates(hash); !equality.Semantic.DeepEqual(got, w) {
					t.Errorf("in-place update state = %s, want %s", up.Annotations[InplaceUpdateStateAnnotation], upJSON(t, w))
				}
			}
			for k, v := range tc.wantAnnotations {
				got, ok := up.Annotations[k]
				switch {
				case v == nil && ok:
					t.Errorf("annotation %s = %q written, want it left alone", k, got)
				case v != nil && (!ok || got != *v):
					t.Errorf("annotation %s = %q (written: %v), want %q", k, got, ok, *v)
				}
			}
			// Nothing but the hash, the state and the expected annotations is written.
			for k := range up.Annotations {
				if _, ok := tc.wantAnnotations[k]; !ok && k != HashAnnotation && k != InplaceUpdateStateAnnotation {
					t.Errorf("unexpected annotation %s = %q", k, up.Annotations[k])
				}
			}
		})
	}
}

// TestPlanUpgradeStateWire pins the JSON of the state entry PlanUpgrade creates, as OpenKruise's
// UpdatePodAnnotationsInUpgrade writes it.
func TestPlanUpgradeStateWire(t *testing.T) {
	old := upSet("s", upContainer("log", "log:1"))
	next := upImage(old, "log", "log:2")
	next.Annotations = map[string]string{HashAnnotation: "h2"} // the webhook's hash wins over the spec's
	pod := upPod(t, old)
	up, err := PlanUpgrade(pod, next, upNow)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"s":{"revision":"h2","updateTimestamp":"2026-02-03T04:05:06Z","lastContainerStatuses":{"log":{"imageID":"id-log-1","resources":{}}}}}`
	if got := up.Annotations[InplaceUpdateStateAnnotation]; got != want {
		t.Errorf("state annotation = %s\nwant %s", got, want)
	}
	specs, err := PodUpgradeSpecs(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: up.Annotations}}, HashAnnotation)
	if err != nil || specs["s"].Hash != "h2" {
		t.Errorf("hash entry = %+v (%v), want hash h2", specs["s"], err)
	}
}

// TestPlanUpgradeOlderHashFormat: a pod whose hash annotation is the older name → hash map is read;
// the SidecarSet's entry is written in the current format and the other names keep their hash.
func TestPlanUpgradeOlderHashFormat(t *testing.T) {
	old := upSet("s", upContainer("log", "log:1"))
	next := upImage(old, "log", "log:2")
	pod := upPod(t, old)
	pod.Annotations[HashAnnotation] = `{"s":"old-hash","other":"other-hash"}`
	up, err := PlanUpgrade(pod, next, upNow)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := PodUpgradeSpecs(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: up.Annotations}}, HashAnnotation)
	if err != nil {
		t.Fatal(err)
	}
	if specs["s"].Hash != upHash(t, next) || specs["s"].SidecarSetName != "s" || !equality.Semantic.DeepEqual(specs["s"].UpdateTimestamp, upNow) {
		t.Errorf("entry s = %+v", specs["s"])
	}
	if specs["other"].Hash != "other-hash" {
		t.Errorf("entry other = %+v, want its hash kept", specs["other"])
	}
}

func TestPlanUpgradeRefusesUnreadableHash(t *testing.T) {
	old := upSet("s", upContainer("log", "log:1"))
	pod := upPod(t, old)
	pod.Annotations[HashAnnotation] = `not json`
	if _, err := PlanUpgrade(pod, upImage(old, "log", "log:2"), upNow); err == nil {
		t.Errorf("PlanUpgrade accepted an unreadable hash annotation")
	}
}

// TestSidecarNames: containers and native-sidecar init containers, sorted; plain init containers
// and hot-upgrade copies are not listed.
func TestSidecarNames(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	set := upSet("s", upContainer("zeta", "z:1"), upHot("mesh", "mesh:1", "empty:1"))
	native := upContainer("init-proxy", "p:1")
	native.RestartPolicy = &always
	set.Spec.InitContainers = []v1beta1.SidecarSetContainer{upContainer("plain-init", "i:1"), native}
	want := []string{"init-proxy", "mesh", "zeta"}
	if got := SidecarNames(set); !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("SidecarNames = %v, want %v", got, want)
	}
}

// TestConsistent: pod status × SidecarSet → whether the sidecars run what their spec asks
// (OpenKruise's IsPodStateConsistent).
func TestConsistent(t *testing.T) {
	const (
		digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	)
	set := upSet("s", upContainer("log", "log:1"), upContainer("mesh", "mesh:1"))
	// upgraded is a pod whose log sidecar was patched from log:1 to log:2, with the old image ID
	// recorded, and whose status still reports log:1 with imageID.
	upgraded := func(t *testing.T, imageID string) *corev1.Pod {
		p := upPod(t, set)
		upSpec(p, "log").Image = "log:2"
		p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h", UpdateTimestamp: upT0,
			LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: "id-log-1"}}}})
		upStatus(p, "log").ImageID = imageID
		return p
	}
	digests := func(t *testing.T, idLog, idMesh string) *corev1.Pod {
		p := upPod(t, set)
		upSpec(p, "log").Image = "registry.io/log@" + digestA
		upSpec(p, "mesh").Image = "registry.io/mesh@" + digestA
		upStatus(p, "log").ImageID, upStatus(p, "mesh").ImageID = idLog, idMesh
		return p
	}
	cases := []struct {
		name  string
		pod   func(*testing.T) *corev1.Pod
		names map[string]bool
		want  bool
	}{{
		name: "no state annotation: injected and never upgraded",
		pod: func(t *testing.T) *corev1.Pod {
			p := upPod(t, set)
			upStatus(p, "log").Image = "something-else:7"
			return p
		},
		want: true,
	}, {
		name: "image ID unchanged while the spec image differs from the status image",
		pod:  func(t *testing.T) *corev1.Pod { return upgraded(t, "id-log-1") },
		want: false,
	}, {
		name: "image ID changed",
		pod:  func(t *testing.T) *corev1.Pod { return upgraded(t, "id-log-2") },
		want: true,
	}, {
		name: "image ID unchanged but the status reports the spec image",
		pod: func(t *testing.T) *corev1.Pod {
			p := upgraded(t, "id-log-1")
			upStatus(p, "log").Image = "log:2"
			return p
		},
		want: true,
	}, {
		name:  "names restricts the check to other sidecars",
		pod:   func(t *testing.T) *corev1.Pod { return upgraded(t, "id-log-1") },
		names: map[string]bool{"mesh": true},
		want:  true,
	}, {
		name:  "names restricts the check to the lagging sidecar",
		pod:   func(t *testing.T) *corev1.Pod { return upgraded(t, "id-log-1") },
		names: map[string]bool{"log": true},
		want:  false,
	}, {
		name: "the state entry of another SidecarSet does not count",
		pod: func(t *testing.T) *corev1.Pod {
			p := upgraded(t, "id-log-1")
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"other": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: "id-log-1"}}}})
			return p
		},
		want: true,
	}, {
		name: "an app container lagging does not count",
		pod: func(t *testing.T) *corev1.Pod {
			p := upPod(t, set)
			upSpec(p, "app").Image = "app:2"
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: "id-app-1"}}}})
			return p
		},
		want: true,
	}, {
		name: "an unreadable state annotation",
		pod: func(t *testing.T) *corev1.Pod {
			p := upPod(t, set)
			p.Annotations[InplaceUpdateStateAnnotation] = "{"
			return p
		},
		want: false,
	}, {
		name: "a container status missing",
		pod: func(t *testing.T) *corev1.Pod {
			p := upPod(t, set)
			p.Status.ContainerStatuses = p.Status.ContainerStatuses[:len(p.Status.ContainerStatuses)-1]
			return p
		},
		want: false,
	}, {
		name: "a container status too many",
		pod: func(t *testing.T) *corev1.Pod {
			p := upPod(t, set)
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "ghost", ImageID: "x"})
			return p
		},
		want: false,
	}, {
		name: "digest images whose image IDs carry their digests: no state check",
		pod: func(t *testing.T) *corev1.Pod {
			p := digests(t, "docker-pullable://registry.io/log@"+digestA, "registry.io/mesh@"+digestA)
			// A state that would say "not upgraded yet" is not read when every sidecar is digest-pinned.
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: "docker-pullable://registry.io/log@" + digestA}}}})
			return p
		},
		want: true,
	}, {
		// containerd reports the image's config digest as the image ID (kruise#2570): a sidecar
		// never upgraded in place is consistent whatever digest its image ID carries.
		name: "a digest image whose image ID carries another digest, never upgraded in place",
		pod: func(t *testing.T) *corev1.Pod {
			return digests(t, "docker-pullable://registry.io/log@"+digestA, "docker-pullable://registry.io/mesh@"+digestB)
		},
		want: true,
	}, {
		name: "a digest image upgraded in place whose image ID has not changed yet",
		pod: func(t *testing.T) *corev1.Pod {
			p := digests(t, "docker-pullable://registry.io/log@"+digestA, "sha256:config-old")
			upStatus(p, "mesh").Image = "registry.io/mesh@" + digestB
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"mesh": {ImageID: "sha256:config-old"}}}})
			return p
		},
		want: false,
	}, {
		name: "a digest image upgraded in place whose image ID changed",
		pod: func(t *testing.T) *corev1.Pod {
			p := digests(t, "docker-pullable://registry.io/log@"+digestA, "sha256:config-new")
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"mesh": {ImageID: "sha256:config-old"}}}})
			return p
		},
		want: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Consistent(tc.pod(t), set, tc.names); got != tc.want {
				t.Errorf("Consistent = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestConsistentMixedDigestOrder: a pod whose tag-image sidecar comes before a digest-pinned one
// reporting another digest is consistent, in OpenKruise (its digest checks stop at the tag image,
// openkruise/kruise#854) and in Kruise (an image ID without the digest is judged by the recorded
// image IDs, kruise#2570).
func TestConsistentMixedDigestOrder(t *testing.T) {
	const (
		digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	)
	set := upSet("s", upContainer("log", "log:1"), upContainer("mesh", "registry.io/mesh@"+digestA))
	pod := upPod(t, set) // containers: log, mesh, app
	upStatus(pod, "mesh").ImageID = "docker-pullable://registry.io/mesh@" + digestB
	if !Consistent(pod, set, nil) {
		t.Errorf("Consistent = false, want true (OpenKruise stops the digest checks at the tag-image sidecar log)")
	}
}

// TestRunningAndReady: OpenKruise's IsPodReady (Running) and, with IsPodStateConsistent, its
// "ready pod" (Ready).
func TestRunningAndReady(t *testing.T) {
	set := upSet("s", upContainer("log", "log:1"), upHot("mesh", "mesh:1", "empty:1"))
	cases := []struct {
		name           string
		pod            func(*testing.T, *corev1.Pod)
		running, ready bool
	}{{
		name: "running and ready", running: true, ready: true,
	}, {
		name:    "pending",
		pod:     func(_ *testing.T, p *corev1.Pod) { p.Status.Phase = corev1.PodPending },
		running: false, ready: false,
	}, {
		name:    "PodReady false",
		pod:     func(_ *testing.T, p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse },
		running: false, ready: false,
	}, {
		name:    "no PodReady condition",
		pod:     func(_ *testing.T, p *corev1.Pod) { p.Status.Conditions = nil },
		running: false, ready: false,
	}, {
		name:    "the idle hot-upgrade copy runs another image than the empty one",
		pod:     func(_ *testing.T, p *corev1.Pod) { upSpec(p, "mesh-2").Image = "mesh:0" },
		running: false, ready: false,
	}, {
		name: "mesh-2 working: mesh-1 is the idle copy and must run the empty image",
		pod: func(_ *testing.T, p *corev1.Pod) {
			p.Annotations[WorkingHotUpgradeContainerAnnotation] = `{"mesh":"mesh-2"}`
			upSpec(p, "mesh-2").Image = "mesh:1"
		},
		running: false, ready: false,
	}, {
		name: "mesh-2 working and mesh-1 empty",
		pod: func(_ *testing.T, p *corev1.Pod) {
			p.Annotations[WorkingHotUpgradeContainerAnnotation] = `{"mesh":"mesh-2"}`
			upSpec(p, "mesh-2").Image, upSpec(p, "mesh-1").Image = "mesh:1", "empty:1"
			upStatus(p, "mesh-2").Image, upStatus(p, "mesh-1").Image = "mesh:1", "empty:1"
		},
		running: true, ready: true,
	}, {
		name: "running but a sidecar not yet restarted on its new image",
		pod: func(t *testing.T, p *corev1.Pod) {
			upSpec(p, "log").Image = "log:2"
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: "id-log-1"}}}})
		},
		running: true, ready: false,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := upPod(t, set)
			if tc.pod != nil {
				tc.pod(t, p)
			}
			if got := Running(p, set); got != tc.running {
				t.Errorf("Running = %v, want %v", got, tc.running)
			}
			if got := Ready(p, set); got != tc.ready {
				t.Errorf("Ready = %v, want %v", got, tc.ready)
			}
		})
	}
}

// TestUpgradable: ImagesOnly, InFlight and Upgradable (OpenKruise's IsSidecarSetUpgradable).
func TestUpgradable(t *testing.T) {
	old := upSet("s", upContainer("log", "log:1"), upContainer("mesh", "mesh:1"))
	imageOnly := upImage(old, "log", "log:2")
	moreThanImage := imageOnly.DeepCopy()
	moreThanImage.Spec.Containers[1].Command = []string{"serve"}
	// lagging is a pod whose log sidecar was patched to log:2 and still runs log:1.
	lagging := func(t *testing.T, p *corev1.Pod) {
		upSpec(p, "log").Image = "log:2"
		p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
			LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: "id-log-1"}}}})
	}
	cases := []struct {
		name                             string
		set                              *v1beta1.SidecarSet
		pod                              func(*testing.T, *corev1.Pod)
		imagesOnly, inFlight, upgradable bool
	}{{
		name: "images only", set: imageOnly,
		imagesOnly: true, upgradable: true,
	}, {
		name: "more than images", set: moreThanImage,
		imagesOnly: false, upgradable: false,
	}, {
		name: "no hash-without-image entry", set: imageOnly,
		pod:        func(_ *testing.T, p *corev1.Pod) { delete(p.Annotations, HashWithoutImageAnnotation) },
		imagesOnly: false, upgradable: false,
	}, {
		name: "the older map of names to hashes is read",
		set:  imageOnly,
		pod: func(t *testing.T, p *corev1.Pod) {
			h, err := SetHashWithoutImage(old)
			if err != nil {
				t.Fatal(err)
			}
			p.Annotations[HashWithoutImageAnnotation] = upJSON(t, map[string]string{"s": h})
		},
		imagesOnly: true, upgradable: true,
	}, {
		name: "the SidecarSet's hash-without-image annotation wins over its spec",
		set: func() *v1beta1.SidecarSet {
			s := moreThanImage.DeepCopy()
			h, _ := SetHashWithoutImage(old)
			s.Annotations = map[string]string{HashWithoutImageAnnotation: h}
			return s
		}(),
		imagesOnly: true, upgradable: true,
	}, {
		name: "a ready sidecar still on the image it was not upgraded to yet", set: imageOnly,
		pod:        lagging,
		imagesOnly: true, inFlight: true, upgradable: false,
	}, {
		name: "a lagging sidecar that is not ready is not in flight", set: imageOnly,
		pod: func(t *testing.T, p *corev1.Pod) {
			lagging(t, p)
			upStatus(p, "log").Ready = false
		},
		imagesOnly: true, inFlight: false, upgradable: true,
	}, {
		name: "a lagging sidecar that now reports another image ID is done", set: imageOnly,
		pod: func(t *testing.T, p *corev1.Pod) {
			lagging(t, p)
			upStatus(p, "log").ImageID = "id-log-2"
		},
		imagesOnly: true, inFlight: false, upgradable: true,
	}, {
		name: "more than images and in flight", set: moreThanImage,
		pod:        lagging,
		imagesOnly: false, inFlight: true, upgradable: false,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := upPod(t, old)
			if tc.pod != nil {
				tc.pod(t, p)
			}
			if got := ImagesOnly(p, tc.set); got != tc.imagesOnly {
				t.Errorf("ImagesOnly = %v, want %v", got, tc.imagesOnly)
			}
			if got := InFlight(p, tc.set); got != tc.inFlight {
				t.Errorf("InFlight = %v, want %v", got, tc.inFlight)
			}
			if got := Upgradable(p, tc.set); got != tc.upgradable {
				t.Errorf("Upgradable = %v, want %v", got, tc.upgradable)
			}
		})
	}
}

// TestUpgradableConditionFor: pod condition × (SidecarSet, upgradable) → the SidecarSetUpgradable
// condition OpenKruise's updatePodSidecarSetUpgradableCondition writes, and whether it changes.
func TestUpgradableConditionFor(t *testing.T) {
	cond := func(status corev1.ConditionStatus, reason, msg string, at metav1.Time) *corev1.PodCondition {
		return &corev1.PodCondition{Type: UpgradableCondition, Status: status, Reason: reason, Message: msg, LastTransitionTime: at}
	}
	cases := []struct {
		name       string
		old        *corev1.PodCondition
		set        string
		upgradable bool
		want       corev1.PodCondition
		changed    bool
	}{{
		name: "no condition yet, upgradable", set: "a", upgradable: true,
		want:    *cond(corev1.ConditionTrue, ReasonAllUpgradable, `{"a":true}`, upNow),
		changed: true,
	}, {
		name: "no condition yet, not upgradable", set: "a", upgradable: false,
		want:    *cond(corev1.ConditionFalse, ReasonNotUpgradable, `{"a":false}`, upNow),
		changed: true,
	}, {
		name: "another SidecarSet cannot: False, entries merged, transition now",
		old:  cond(corev1.ConditionTrue, ReasonAllUpgradable, `{"a":true}`, upT0), set: "b", upgradable: false,
		want:    *cond(corev1.ConditionFalse, ReasonNotUpgradable, `{"a":true,"b":false}`, upNow),
		changed: true,
	}, {
		name: "still False: the transition time stays, the message changes",
		old:  cond(corev1.ConditionFalse, ReasonNotUpgradable, `{"a":false,"b":true}`, upT0), set: "b", upgradable: false,
		want:    *cond(corev1.ConditionFalse, ReasonNotUpgradable, `{"a":false,"b":false}`, upT0),
		changed: true,
	}, {
		name: "one SidecarSet can again while another cannot: stays False",
		old:  cond(corev1.ConditionFalse, ReasonNotUpgradable, `{"a":false,"b":false}`, upT0), set: "b", upgradable: true,
		want:    *cond(corev1.ConditionFalse, ReasonNotUpgradable, `{"a":false,"b":true}`, upT0),
		changed: true,
	}, {
		name: "the last one that could not can: True, transition now",
		old:  cond(corev1.ConditionFalse, ReasonNotUpgradable, `{"a":false,"b":true}`, upT0), set: "a", upgradable: true,
		want:    *cond(corev1.ConditionTrue, ReasonAllUpgradable, `{"a":true,"b":true}`, upNow),
		changed: true,
	}, {
		name: "nothing new: unchanged",
		old:  cond(corev1.ConditionTrue, ReasonAllUpgradable, `{"a":true,"b":true}`, upT0), set: "b", upgradable: true,
		want:    *cond(corev1.ConditionTrue, ReasonAllUpgradable, `{"a":true,"b":true}`, upT0),
		changed: false,
	}, {
		name: "same status and message but another reason: changed",
		old:  cond(corev1.ConditionTrue, "Other", `{"a":true}`, upT0), set: "a", upgradable: true,
		want:    *cond(corev1.ConditionTrue, ReasonAllUpgradable, `{"a":true}`, upT0),
		changed: true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: upT0}}}}
			if tc.old != nil {
				pod.Status.Conditions = append(pod.Status.Conditions, *tc.old)
			}
			before := pod.DeepCopy()
			got, changed := UpgradableConditionFor(pod, tc.set, tc.upgradable, upNow)
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("condition = %+v\nwant %+v", got, tc.want)
			}
			if changed != tc.changed {
				t.Errorf("changed = %v, want %v", changed, tc.changed)
			}
			if !equality.Semantic.DeepEqual(pod, before) {
				t.Errorf("UpgradableConditionFor modified the pod")
			}
		})
	}
}

// TestInjected: which pods carry a SidecarSet's sidecars (OpenKruise's IsPodInjectedSidecarSet and
// IsPodConsistentWithSidecarSet).
func TestInjected(t *testing.T) {
	cold := upSet("s", upContainer("log", "log:1"))
	hot := upSet("s", upContainer("log", "log:1"), upHot("mesh", "mesh:1", "empty:1"))
	cases := []struct {
		name string
		set  *v1beta1.SidecarSet
		pod  func(*corev1.Pod)
		want bool
	}{
		{name: "listed with its container", set: cold, want: true},
		{name: "listed among others", set: cold, pod: func(p *corev1.Pod) { p.Annotations[InjectedListAnnotation] = "a,s,z" }, want: true},
		{name: "not listed", set: cold, pod: func(p *corev1.Pod) { p.Annotations[InjectedListAnnotation] = "other" }, want: false},
		{name: "a name that only contains it", set: cold, pod: func(p *corev1.Pod) { p.Annotations[InjectedListAnnotation] = "ss,s-2" }, want: false},
		{name: "no list", set: cold, pod: func(p *corev1.Pod) { delete(p.Annotations, InjectedListAnnotation) }, want: false},
		{name: "listed, its container gone", set: cold, pod: func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[1:] }, want: false},
		{name: "hot upgrade: both copies and the working entry", set: hot, want: true},
		{name: "hot upgrade: a copy missing", set: hot, pod: func(p *corev1.Pod) {
			var keep []corev1.Container
			for _, c := range p.Spec.Containers {
				if c.Name != "mesh-2" {
					keep = append(keep, c)
				}
			}
			p.Spec.Containers = keep
		}, want: false},
		{name: "hot upgrade: no working entry for it", set: hot, pod: func(p *corev1.Pod) {
			p.Annotations[WorkingHotUpgradeContainerAnnotation] = `{"other":"other-1"}`
		}, want: false},
		{name: "hot upgrade: unreadable working annotation", set: hot, pod: func(p *corev1.Pod) {
			p.Annotations[WorkingHotUpgradeContainerAnnotation] = `mesh-1`
		}, want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := upPod(t, tc.set)
			if tc.pod != nil {
				tc.pod(p)
			}
			if got := Injected(p, tc.set); got != tc.want {
				t.Errorf("Injected = %v, want %v", got, tc.want)
			}
		})
	}
}
