package sidecarrules

import (
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Tests of the hot upgrade (hotupgrade_upgrade.go) against OpenKruise v1.9.0's sidecarcontrol
// (util_hotupgrade.go: findContainerToHotUpgrade, GetPodHotUpgradeContainers;
// sidecarset_control.go: UpgradeSidecarContainer, IsPodReady) and its SidecarSet processor
// (sidecarset_processor.go: updatePodSidecarContainer; sidecarset_hotupgrade.go:
// isPodSidecarInHotUpgrading, isHotUpgradingReady, flipPodSidecarContainerDo).

// hotSet is SidecarSet s with a cold sidecar log:1 and the hot-upgrade sidecar mesh on image, its
// empty image empty:1, at resourceVersion rv.
func hotSet(image, rv string) *v1beta1.SidecarSet {
	s := upSet("s", upContainer("log", "log:1"), upHot("mesh", image, "empty:1"))
	s.ResourceVersion = rv
	return s
}

// kubelet is pod after the kubelet restarted each container whose spec image differs from the one
// it runs: it runs the spec image (image ID "id-<image>"), ready, one restart more.
func kubelet(pod *corev1.Pod) *corev1.Pod {
	out := pod.DeepCopy()
	for i := range out.Status.ContainerStatuses {
		cs := &out.Status.ContainerStatuses[i]
		if c := upSpec(out, cs.Name); c != nil && c.Image != cs.Image {
			cs.Image, cs.ImageID, cs.Ready = c.Image, "id-"+c.Image, true
			cs.RestartCount++
		}
	}
	return out
}

// applied is pod after up was written (Patched), checking up changes no image to its own value.
func applied(t *testing.T, pod *corev1.Pod, up *Upgrade) *corev1.Pod {
	t.Helper()
	for name, img := range up.Images {
		if upSpec(pod, name).Image == img {
			t.Errorf("the patch sets container %s to the image it has, %s", name, img)
		}
	}
	return Patched(pod, up)
}

func versions(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, n := range []string{"mesh-1", "mesh-2"} {
		out[VersionAnnotationPrefix+n] = pod.Annotations[VersionAnnotationPrefix+n]
		out[VersionAltAnnotationPrefix+n] = pod.Annotations[VersionAltAnnotationPrefix+n]
	}
	return out
}

// vers builds the version annotations of mesh-1 and mesh-2: version, versionalt of each.
func vers(v1, alt1, v2, alt2 string) map[string]string {
	return map[string]string{
		VersionAnnotationPrefix + "mesh-1": v1, VersionAltAnnotationPrefix + "mesh-1": alt1,
		VersionAnnotationPrefix + "mesh-2": v2, VersionAltAnnotationPrefix + "mesh-2": alt2,
	}
}

func vV(c string) string { return VersionAnnotationPrefix + c }
func vA(c string) string { return VersionAltAnnotationPrefix + c }

// written is the map of the key, value pairs kv.
func written(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// TestHotUpgradePair: which copy works, as GetPodHotUpgradeContainers reads the annotation.
func TestHotUpgradePair(t *testing.T) {
	cases := []struct {
		name, annotation string
		set              bool
		working, other   string
	}{
		{name: "mesh-1 named", annotation: `{"mesh":"mesh-1"}`, set: true, working: "mesh-1", other: "mesh-2"},
		{name: "mesh-2 named", annotation: `{"mesh":"mesh-2","envoy":"envoy-1"}`, set: true, working: "mesh-2", other: "mesh-1"},
		{name: "no annotation: mesh-2", working: "mesh-2", other: "mesh-1"},
		{name: "no entry for mesh: mesh-2", annotation: `{"envoy":"envoy-1"}`, set: true, working: "mesh-2", other: "mesh-1"},
		{name: "another name: mesh-2", annotation: `{"mesh":"mesh-3"}`, set: true, working: "mesh-2", other: "mesh-1"},
		{name: "unreadable: mesh-2", annotation: `mesh-1`, set: true, working: "mesh-2", other: "mesh-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{}
			if tc.set {
				pod.Annotations = map[string]string{WorkingHotUpgradeContainerAnnotation: tc.annotation}
			}
			if w, o := HotUpgradePair(pod, "mesh"); w != tc.working || o != tc.other {
				t.Errorf("HotUpgradePair = %s, %s; want %s, %s", w, o, tc.working, tc.other)
			}
		})
	}
}

// TestPlanFullUpgradeHot: which copy of a hot-upgrade sidecar the upgrade writes to
// (findContainerToHotUpgrade), and the annotations updatePodSidecarContainer writes with it.
func TestPlanFullUpgradeHot(t *testing.T) {
	v1 := hotSet("mesh:1", "10")
	// upgraded is a pod of v1 whose mesh-2 was hot-upgraded to mesh:2 and runs it: mesh-2 works,
	// mesh-1 still runs mesh:1 (not flipped yet).
	upgraded := func(p *corev1.Pod) {
		p.Annotations[WorkingHotUpgradeContainerAnnotation] = `{"mesh":"mesh-2"}`
		upSpec(p, "mesh-2").Image = "mesh:2"
		*upStatus(p, "mesh-2") = corev1.ContainerStatus{Name: "mesh-2", Image: "mesh:2", ImageID: "id-mesh:2", Ready: true}
		maps.Copy(p.Annotations, vers("1", "20", "20", "1"))
	}
	type states = map[string]*appspub.InPlaceUpdateState
	cases := []struct {
		name       string
		pod        func(*testing.T, *corev1.Pod)
		set        *v1beta1.SidecarSet
		wantImages map[string]string
		// wantWorking is the working annotation written ("" none).
		wantWorking string
		// wantVersions are the version annotations written (nil: none).
		wantVersions map[string]string
		// wantChanged are the containers whose image IDs the state entry records.
		wantChanged map[string]string
		// keptRevision is the revision of a state entry already on the pod (written at upT0).
		keptRevision string
	}{{
		name:         "injected pod: the idle copy mesh-2 gets the image and works; versions from the resourceVersion",
		set:          hotSet("mesh:2", "20"),
		wantImages:   map[string]string{"mesh-2": "mesh:2"},
		wantWorking:  `{"mesh":"mesh-2"}`,
		wantVersions: written(vV("mesh-2"), "20", vA("mesh-2"), "1", vA("mesh-1"), "20"),
		wantChanged:  map[string]string{"mesh-2": "id-mesh-2-1"},
	}, {
		name: "mesh-1 on the empty image wins, whichever works",
		pod: func(_ *testing.T, p *corev1.Pod) {
			upSpec(p, "mesh-1").Image, upSpec(p, "mesh-2").Image = "empty:1", "mesh:1"
		},
		set:          hotSet("mesh:2", "20"),
		wantImages:   map[string]string{"mesh-1": "mesh:2"},
		wantWorking:  `{"mesh":"mesh-1"}`,
		wantVersions: written(vV("mesh-1"), "20", vA("mesh-1"), "0", vA("mesh-2"), "20"),
		wantChanged:  map[string]string{"mesh-1": "id-mesh-1-1"},
	}, {
		name: "the working copy already runs the image: nothing for mesh",
		pod: func(_ *testing.T, p *corev1.Pod) {
			upSpec(p, "log").Image = "log:0" // the cold sidecar still changes
		},
		set:         hotSet("mesh:1", "20"),
		wantImages:  map[string]string{"log": "log:1"},
		wantChanged: map[string]string{"log": "id-log-1"},
	}, {
		name:         "no copy empty, both ready: the copy not working (the old one) gets the image",
		pod:          func(_ *testing.T, p *corev1.Pod) { upgraded(p) },
		set:          hotSet("mesh:3", "30"),
		wantImages:   map[string]string{"mesh-1": "mesh:3"},
		wantWorking:  `{"mesh":"mesh-1"}`,
		wantVersions: written(vV("mesh-1"), "30", vA("mesh-1"), "20", vA("mesh-2"), "30"),
		wantChanged:  map[string]string{"mesh-1": "id-mesh-1-1"},
	}, {
		name: "no copy empty, the new copy not ready (a bad image): it gets the next image and keeps working",
		pod: func(_ *testing.T, p *corev1.Pod) {
			upgraded(p)
			upSpec(p, "mesh-2").Image = "mesh:bad"
			*upStatus(p, "mesh-2") = corev1.ContainerStatus{Name: "mesh-2", Image: "empty:1", ImageID: "id-mesh-2-1"}
		},
		set:          hotSet("mesh:3", "30"),
		wantImages:   map[string]string{"mesh-2": "mesh:3"},
		wantWorking:  `{"mesh":"mesh-2"}`,
		wantVersions: written(vV("mesh-2"), "30", vA("mesh-2"), "1", vA("mesh-1"), "30"),
		wantChanged:  map[string]string{"mesh-2": "id-mesh-2-1"},
	}, {
		name: "no copy empty, the new copy ready but not restarted on its image yet: not ready",
		pod: func(t *testing.T, p *corev1.Pod) {
			upgraded(p)
			*upStatus(p, "mesh-2") = corev1.ContainerStatus{Name: "mesh-2", Image: "empty:1", ImageID: "id-mesh-2-1", Ready: true}
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, states{"s": {Revision: "h", UpdateTimestamp: upT0,
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"mesh-2": {ImageID: "id-mesh-2-1"}}}})
		},
		set:          hotSet("mesh:3", "30"),
		wantImages:   map[string]string{"mesh-2": "mesh:3"},
		wantWorking:  `{"mesh":"mesh-2"}`,
		wantVersions: written(vV("mesh-2"), "30", vA("mesh-2"), "1", vA("mesh-1"), "30"),
		wantChanged:  map[string]string{"mesh-2": "id-mesh-2-1"},
		keptRevision: "h",
	}, {
		name: "no copy empty, the old copy not ready: it gets the image and works",
		pod: func(_ *testing.T, p *corev1.Pod) {
			upgraded(p)
			upStatus(p, "mesh-1").Ready = false
		},
		set:          hotSet("mesh:3", "30"),
		wantImages:   map[string]string{"mesh-1": "mesh:3"},
		wantWorking:  `{"mesh":"mesh-1"}`,
		wantVersions: written(vV("mesh-1"), "30", vA("mesh-1"), "20", vA("mesh-2"), "30"),
		wantChanged:  map[string]string{"mesh-1": "id-mesh-1-1"},
	}, {
		name:         "rollback before the flip: the old copy already has the image; it works again, its spec unchanged",
		pod:          func(_ *testing.T, p *corev1.Pod) { upgraded(p) },
		set:          hotSet("mesh:1", "30"),
		wantImages:   map[string]string{},
		wantWorking:  `{"mesh":"mesh-1"}`,
		wantVersions: written(vV("mesh-1"), "30", vA("mesh-1"), "20", vA("mesh-2"), "30"),
		wantChanged:  map[string]string{"mesh-1": "id-mesh-1-1"},
	}, {
		name: "cold and hot together; the working entries of other sidecars stay",
		pod: func(_ *testing.T, p *corev1.Pod) {
			p.Annotations[WorkingHotUpgradeContainerAnnotation] = `{"envoy":"envoy-2","mesh":"mesh-1"}`
		},
		set: func() *v1beta1.SidecarSet {
			s := hotSet("mesh:2", "20")
			s.Spec.Containers[0].Image = "log:2"
			return s
		}(),
		wantImages:   map[string]string{"log": "log:2", "mesh-2": "mesh:2"},
		wantWorking:  `{"envoy":"envoy-2","mesh":"mesh-2"}`,
		wantVersions: written(vV("mesh-2"), "20", vA("mesh-2"), "1", vA("mesh-1"), "20"),
		wantChanged:  map[string]string{"log": "id-log-1", "mesh-2": "id-mesh-2-1"},
	}, {
		name: "a pod without version annotations: the new copy's versionalt is empty",
		pod: func(_ *testing.T, p *corev1.Pod) {
			for k := range vers("", "", "", "") {
				delete(p.Annotations, k)
			}
		},
		set:          hotSet("mesh:2", "20"),
		wantImages:   map[string]string{"mesh-2": "mesh:2"},
		wantWorking:  `{"mesh":"mesh-2"}`,
		wantVersions: written(vV("mesh-2"), "20", vA("mesh-2"), "", vA("mesh-1"), "20"),
		wantChanged:  map[string]string{"mesh-2": "id-mesh-2-1"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := upPod(t, v1)
			if tc.pod != nil {
				tc.pod(t, pod)
			}
			before := pod.DeepCopy()
			up, err := PlanFullUpgrade(pod, tc.set, upNow)
			if err != nil {
				t.Fatalf("PlanFullUpgrade: %v", err)
			}
			if !equality.Semantic.DeepEqual(pod, before) {
				t.Errorf("PlanFullUpgrade modified its input pod")
			}
			if !maps.Equal(up.Images, tc.wantImages) {
				t.Errorf("Images = %v, want %v", up.Images, tc.wantImages)
			}
			if got, ok := up.Annotations[WorkingHotUpgradeContainerAnnotation]; got != tc.wantWorking || ok != (tc.wantWorking != "") {
				t.Errorf("working annotation = %q (written %v), want %q", got, ok, tc.wantWorking)
			}
			wrote := map[string]string{}
			for k := range vers("", "", "", "") {
				if v, ok := up.Annotations[k]; ok {
					wrote[k] = v
				}
			}
			if !maps.Equal(wrote, nonNilMap(tc.wantVersions)) {
				t.Errorf("version annotations written = %v, want %v", wrote, tc.wantVersions)
			}
			// The hash entry moves to the SidecarSet's hash, as for cold upgrades.
			specs, err := PodUpgradeSpecs(Patched(pod, up), HashAnnotation)
			if err != nil {
				t.Fatal(err)
			}
			if specs["s"].Hash != upHash(t, tc.set) {
				t.Errorf("hash entry %+v, want hash %s", specs["s"], upHash(t, tc.set))
			}
			st := upStates(t, up.Annotations[InplaceUpdateStateAnnotation])["s"]
			if st == nil {
				t.Fatalf("no state entry: %s", up.Annotations[InplaceUpdateStateAnnotation])
			}
			got := map[string]string{}
			for n, cs := range st.LastContainerStatuses {
				got[n] = cs.ImageID
			}
			wantRevision, wantTime := upHash(t, tc.set), upNow
			if tc.keptRevision != "" {
				wantRevision, wantTime = tc.keptRevision, upT0
			}
			if !maps.Equal(got, tc.wantChanged) || st.Revision != wantRevision || !st.UpdateTimestamp.Equal(&wantTime) {
				t.Errorf("state = %+v, want image IDs %v under %s at %s", st, tc.wantChanged, wantRevision, wantTime)
			}
		})
	}
}

// TestFlipDue: when the old copies are flipped (isPodSidecarInHotUpgrading, IsPodStateConsistent
// without the idle copies, isHotUpgradingReady).
func TestFlipDue(t *testing.T) {
	v1, v2 := hotSet("mesh:1", "10"), hotSet("mesh:2", "20")
	// hot is a pod of v1 hot-upgraded to v2 (mesh-2 working on mesh:2) and restarted by the kubelet.
	hot := func(t *testing.T) *corev1.Pod {
		pod := upPod(t, v1)
		up, err := PlanFullUpgrade(pod, v2, upNow)
		if err != nil {
			t.Fatal(err)
		}
		return kubelet(applied(t, pod, up))
	}
	cases := []struct {
		name string
		set  *v1beta1.SidecarSet
		pod  func(*testing.T) *corev1.Pod
		want bool
		// hotUpgrading is HotUpgrading's answer.
		hotUpgrading bool
	}{{
		name: "injected pod: the idle copy is empty, nothing to flip",
		set:  v1, pod: func(t *testing.T) *corev1.Pod { return upPod(t, v1) },
	}, {
		name: "hot-upgraded, restarted, ready: flip",
		set:  v2, pod: hot, want: true, hotUpgrading: true,
	}, {
		name: "hot-upgraded, the new copy not restarted yet: wait",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			pod := upPod(t, v1)
			up, err := PlanFullUpgrade(pod, v2, upNow)
			if err != nil {
				t.Fatal(err)
			}
			return applied(t, pod, up)
		},
		hotUpgrading: true,
	}, {
		name: "pod not ready, every container but the old copy ready: flip",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			p := hot(t)
			p.Status.Conditions[0].Status = corev1.ConditionFalse
			upStatus(p, "mesh-1").Ready = false
			return p
		},
		want: true, hotUpgrading: true,
	}, {
		name: "pod running and ready: the container statuses are not looked at",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			p := hot(t)
			upStatus(p, "app").Ready = false
			return p
		},
		want: true, hotUpgrading: true,
	}, {
		name: "pod ready but not running: the container statuses decide",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			p := hot(t)
			p.Status.Phase = corev1.PodPending
			upStatus(p, "app").Ready = false
			return p
		},
		hotUpgrading: true,
	}, {
		name: "pod not ready, and the app container not ready: wait",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			p := hot(t)
			p.Status.Conditions[0].Status = corev1.ConditionFalse
			upStatus(p, "app").Ready = false
			return p
		},
		hotUpgrading: true,
	}, {
		name: "pod not ready, the new copy not ready: wait",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			p := hot(t)
			p.Status.Conditions[0].Status = corev1.ConditionFalse
			upStatus(p, "mesh-2").Ready = false
			return p
		},
		hotUpgrading: true,
	}, {
		name: "pod ready, but the cold sidecar is not restarted on its new image: wait",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			p := hot(t)
			upSpec(p, "log").Image = "log:2"
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"log": {ImageID: "id-log-1"}}}})
			return p
		},
		hotUpgrading: true,
	}, {
		name: "the old copy's own state does not matter",
		set:  v2,
		pod: func(t *testing.T) *corev1.Pod {
			p := hot(t)
			upSpec(p, "mesh-1").Image = "mesh:0" // spec ahead of status, recorded as before
			p.Annotations[InplaceUpdateStateAnnotation] = upJSON(t, map[string]*appspub.InPlaceUpdateState{"s": {Revision: "h",
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"mesh-1": {ImageID: "id-mesh-1-1"}}}})
			return p
		},
		want: true, hotUpgrading: true,
	}, {
		name: "a SidecarSet without hot-upgrade sidecars never flips",
		set:  upSet("s", upContainer("log", "log:1"), upContainer("mesh-1", "mesh:1"), upContainer("mesh-2", "mesh:2")),
		pod:  hot,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := tc.pod(t)
			if got := HotUpgrading(pod, tc.set); got != tc.hotUpgrading {
				t.Errorf("HotUpgrading = %v, want %v", got, tc.hotUpgrading)
			}
			if got := FlipDue(pod, tc.set); got != tc.want {
				t.Errorf("FlipDue = %v, want %v\n%s", got, tc.want, describeHot(pod))
			}
		})
	}
}

// describeHot lists a pod's containers for test failures.
func describeHot(pod *corev1.Pod) string {
	out := ""
	for _, c := range pod.Spec.Containers {
		st := upStatus(pod, c.Name)
		out += c.Name + " spec=" + c.Image
		if st != nil {
			out += " status=" + st.Image + " id=" + st.ImageID
			if st.Ready {
				out += " ready"
			}
		}
		out += "\n"
	}
	return out + pod.Annotations[WorkingHotUpgradeContainerAnnotation] + " " + pod.Annotations[InplaceUpdateStateAnnotation]
}

// TestPlanFlip: the patch of flipPodSidecarContainerDo.
func TestPlanFlip(t *testing.T) {
	v1, v2 := hotSet("mesh:1", "10"), hotSet("mesh:2", "20")
	pod := upPod(t, v1)
	up, err := PlanFullUpgrade(pod, v2, upNow)
	if err != nil {
		t.Fatal(err)
	}
	hot := kubelet(applied(t, pod, up))
	before := hot.DeepCopy()
	flip, err := PlanFlip(hot, v2, upNow)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(hot, before) {
		t.Errorf("PlanFlip modified its input pod")
	}
	if want := map[string]string{"mesh-1": "empty:1"}; !maps.Equal(flip.Images, want) {
		t.Errorf("Images = %v, want %v", flip.Images, want)
	}
	// Only the version annotations and the state change: not the hash entry, not the working copy.
	for _, k := range []string{HashAnnotation, HashWithoutImageAnnotation, WorkingHotUpgradeContainerAnnotation, InjectedListAnnotation} {
		if v, ok := flip.Annotations[k]; ok {
			t.Errorf("the flip writes %s = %s", k, v)
		}
	}
	if got, want := versions(Patched(hot, flip)), vers("0", "20", "20", "0"); !maps.Equal(got, want) {
		t.Errorf("versions after the flip = %v, want %v", got, want)
	}
	st := upStates(t, flip.Annotations[InplaceUpdateStateAnnotation])["s"]
	want := map[string]appspub.InPlaceUpdateContainerStatus{"mesh-1": {ImageID: "id-mesh-1-1"}, "mesh-2": {ImageID: "id-mesh-2-1"}}
	if st == nil || !equality.Semantic.DeepEqual(st.LastContainerStatuses, want) || st.Revision != upHash(t, v2) {
		t.Errorf("state = %+v, want the image IDs %v", st, want)
	}

	// Nothing to flip: nil.
	for name, p := range map[string]*corev1.Pod{"injected": upPod(t, v1), "flipped": Patched(hot, flip)} {
		if f, err := PlanFlip(p, v2, upNow); err != nil || f != nil {
			t.Errorf("%s pod: PlanFlip = %+v, %v; want nil", name, f, err)
		}
	}
}

// TestHotUpgradeCycle: two image changes, each an upgrade then a flip, with the kubelet in
// between: the work goes mesh-1 → mesh-2 → mesh-1, and the pod counts as updated, running and
// ready as OpenKruise counts it (IsPodSidecarUpdated, IsPodReady, IsPodStateConsistent).
func TestHotUpgradeCycle(t *testing.T) {
	v1, v2, v3 := hotSet("mesh:1", "10"), hotSet("mesh:2", "20"), hotSet("mesh:3", "30")
	pod := upPod(t, v1)
	type want struct {
		updated, running, ready, flipDue bool
		images                           [2]string // mesh-1, mesh-2
		working                          string
		versions                         map[string]string
	}
	check := func(step string, pod *corev1.Pod, set *v1beta1.SidecarSet, w want) {
		t.Helper()
		got := want{updated: Updated(pod, set), running: Running(pod, set), ready: Ready(pod, set), flipDue: FlipDue(pod, set),
			images: [2]string{upSpec(pod, "mesh-1").Image, upSpec(pod, "mesh-2").Image}, versions: versions(pod)}
		got.working, _ = HotUpgradePair(pod, "mesh")
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s:\n got  %+v\n want %+v\n%s", step, got, w, describeHot(pod))
		}
	}
	check("injected", pod, v1, want{updated: true, running: true, ready: true,
		images: [2]string{"mesh:1", "empty:1"}, working: "mesh-1", versions: vers("1", "0", "0", "1")})
	check("v2 published", pod, v2, want{running: true, ready: true,
		images: [2]string{"mesh:1", "empty:1"}, working: "mesh-1", versions: vers("1", "0", "0", "1")})

	up, err := PlanFullUpgrade(pod, v2, upNow)
	if err != nil {
		t.Fatal(err)
	}
	pod = applied(t, pod, up)
	check("upgraded to v2", pod, v2, want{updated: true,
		images: [2]string{"mesh:1", "mesh:2"}, working: "mesh-2", versions: vers("1", "20", "20", "1")})
	pod = kubelet(pod)
	check("mesh-2 restarted", pod, v2, want{updated: true, flipDue: true,
		images: [2]string{"mesh:1", "mesh:2"}, working: "mesh-2", versions: vers("1", "20", "20", "1")})

	flip, err := PlanFlip(pod, v2, upNow)
	if err != nil {
		t.Fatal(err)
	}
	pod = applied(t, pod, flip)
	check("mesh-1 flipped", pod, v2, want{updated: true, running: true,
		images: [2]string{"empty:1", "mesh:2"}, working: "mesh-2", versions: vers("0", "20", "20", "0")})
	pod = kubelet(pod)
	check("mesh-1 restarted empty", pod, v2, want{updated: true, running: true, ready: true,
		images: [2]string{"empty:1", "mesh:2"}, working: "mesh-2", versions: vers("0", "20", "20", "0")})
	if !Upgradable(pod, v3) {
		t.Errorf("the pod is not upgradable to v3 once the flip is done")
	}

	// The second change flips back.
	up, err = PlanFullUpgrade(pod, v3, upNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"mesh-1": "mesh:3"}; !maps.Equal(up.Images, want) {
		t.Errorf("upgrade to v3: images %v, want %v", up.Images, want)
	}
	pod = kubelet(applied(t, pod, up))
	check("mesh-1 upgraded to v3 and restarted", pod, v3, want{updated: true, flipDue: true,
		images: [2]string{"mesh:3", "mesh:2"}, working: "mesh-1", versions: vers("30", "20", "20", "30")})
	if flip, err = PlanFlip(pod, v3, upNow); err != nil {
		t.Fatal(err)
	}
	pod = kubelet(applied(t, pod, flip))
	check("mesh-2 flipped and restarted empty", pod, v3, want{updated: true, running: true, ready: true,
		images: [2]string{"mesh:3", "empty:1"}, working: "mesh-1", versions: vers("30", "0", "0", "30")})
	if cs := upStatus(pod, "app"); cs.RestartCount != 0 {
		t.Errorf("the app container restarted %d times", cs.RestartCount)
	}
}

// TestPatched: the pod after a patch; the input is left alone.
func TestPatched(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "a:1"}, {Name: "b", Image: "b:1"}}}}
	out := Patched(pod, &Upgrade{Images: map[string]string{"b": "b:2", "x": "x:1"}, Annotations: map[string]string{"k": "v"}})
	if out.Spec.Containers[0].Image != "a:1" || out.Spec.Containers[1].Image != "b:2" || out.Annotations["k"] != "v" || len(out.Spec.Containers) != 2 {
		t.Errorf("Patched = %+v", out)
	}
	if pod.Spec.Containers[1].Image != "b:1" || pod.Annotations != nil {
		t.Errorf("Patched modified its input: %+v", pod)
	}
}
