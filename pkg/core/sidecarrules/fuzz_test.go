package sidecarrules

import (
	"encoding/json"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// FuzzInjectNeverPanics decodes a pod, SidecarSets and revisions from JSON and checks that Inject
// does not panic, leaves its inputs alone, is deterministic, leaves the pod as it is when nothing
// is injected, and marks every container it adds with IS_INJECTED=true.
func FuzzInjectNeverPanics(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed[0], seed[1], seed[2], 0.5)
	}
	f.Fuzz(func(t *testing.T, podJSON, setsJSON, revsJSON []byte, draw float64) {
		var pod corev1.Pod
		var sets []*v1beta1.SidecarSet
		var revs []*appsv1.ControllerRevision
		if json.Unmarshal(podJSON, &pod) != nil || json.Unmarshal(setsJSON, &sets) != nil || json.Unmarshal(revsJSON, &revs) != nil {
			return
		}
		podBefore := pod.DeepCopy()
		setsBefore, _ := json.Marshal(sets)
		opts := func() Options {
			byName := map[string][]*appsv1.ControllerRevision{}
			for _, s := range sets {
				if s != nil {
					byName[s.Name] = revs
				}
			}
			return Options{Now: testNow, Revisions: byName, Draw: func() float64 { return draw },
				NamespaceLabels: pod.Labels, PatchPolicy: &PatchPolicy{DefaultsAllowed: true}}
		}
		res, err := Inject(&pod, sets, opts())
		setsAfter, _ := json.Marshal(sets)
		if !equality.Semantic.DeepEqual(&pod, podBefore) || string(setsAfter) != string(setsBefore) {
			t.Fatalf("Inject modified its inputs")
		}
		again, err2 := Inject(&pod, sets, opts())
		if (err == nil) != (err2 == nil) || (err == nil && !equality.Semantic.DeepEqual(res, again)) {
			t.Fatalf("Inject is not deterministic")
		}
		if err != nil {
			return
		}
		if len(res.Injected) == 0 && !equality.Semantic.DeepEqual(&res.Pod.Spec, &pod.Spec) {
			t.Fatalf("nothing injected, yet the spec changed")
		}
		checkAddedAreMarked(t, pod.Spec.Containers, res.Pod.Spec.Containers)
		checkAddedAreMarked(t, pod.Spec.InitContainers, res.Pod.Spec.InitContainers)
	})
}

func checkAddedAreMarked(t *testing.T, before, after []corev1.Container) {
	t.Helper()
	had := map[string]bool{}
	for _, c := range before {
		had[c.Name] = true
	}
	for i := range after {
		if !had[after[i].Name] && !isInjected(&after[i]) {
			t.Fatalf("added container %s lacks %s=true", after[i].Name, InjectedEnv)
		}
	}
}

// fuzzSeeds are (pod, SidecarSets, revisions) in JSON: the takeover fixture and the table cases'
// shapes.
func fuzzSeeds(f *testing.F) [][3][]byte {
	enc := func(v any) []byte {
		raw, err := json.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		return raw
	}
	var fixtureSet v1beta1.SidecarSet
	var fixture corev1.Pod
	for path, into := range map[string]any{"testdata/sc-log.sidecarset.yaml": &fixtureSet, "testdata/sc-target-4r8tf.pod.yaml": &fixture} {
		raw, err := os.ReadFile(path)
		if err != nil || yaml.Unmarshal(raw, into) != nil {
			f.Fatalf("seed %s: %v", path, err)
		}
	}
	hot := sidecar("mesh", "m:1")
	hot.UpgradeStrategy = v1beta1.SidecarSetContainerUpgradeStrategy{UpgradeType: v1beta1.SidecarSetHotUpgrade, HotUpgradeEmptyImage: "e"}
	hot.ShareVolumePolicy.Type = v1beta1.SidecarSetShareVolumePolicyEnabled
	hot.TransferEnv = []v1beta1.SidecarSetTransferEnvVar{{SourceContainerName: "app", EnvNames: []string{"A"}}}
	full := newSet("full", hot, after(sidecar("log", "l:1")))
	full.Spec.InitContainers = []v1beta1.SidecarSetContainer{nativeSidecar("proxy", "p:1"), sidecar("init", "i:1")}
	full.Spec.Volumes = []corev1.Volume{emptyDir("v")}
	full.Spec.PatchPodMetadata = []v1beta1.SidecarSetPatchPodMetadata{{Annotations: map[string]string{"k": `{"a":1}`}, PatchPolicy: v1beta1.SidecarSetMergePatchJSONPatchPolicy}}
	pinnedRev := []*appsv1.ControllerRevision{revisionOfSeed(f, newSet("full", sidecar("log", "l:0")))}
	pinned := full.DeepCopy()
	pinned.Spec.InjectionStrategy.Revision = &v1beta1.SidecarSetInjectRevision{RevisionName: ptrTo(pinnedRev[0].Name), Policy: v1beta1.SidecarSetPartialRevisionPolicy}
	return [][3][]byte{
		{enc(&fixture), enc([]*v1beta1.SidecarSet{&fixtureSet}), []byte(`[]`)},
		{enc(appPod()), enc([]*v1beta1.SidecarSet{full, newSet("other", sidecar("x", "x"))}), []byte(`[]`)},
		{enc(appPod()), enc([]*v1beta1.SidecarSet{pinned}), enc(pinnedRev)},
		{[]byte(`{"metadata":{"labels":{"app":"web"},"annotations":{"kruise.io/sidecarset-hash":"{\"a\":\"h\"}"}}}`),
			[]byte(`[{"metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"app":"web"}},"containers":[{"name":"a"},{"name":"a"}]}},null]`), []byte(`[null]`)},
	}
}

func revisionOfSeed(f *testing.F, set *v1beta1.SidecarSet) *appsv1.ControllerRevision {
	data, err := RevisionData(&set.Spec)
	if err != nil {
		f.Fatal(err)
	}
	name, _ := RevisionName(set, nil)
	rev := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: data}}
	rev.Name = name
	return rev
}
