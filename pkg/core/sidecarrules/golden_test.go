package sidecarrules

import (
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The fixture: OpenKruise v1.9.0 injected SidecarSet sc-log (log:v1) into the two pods of CloneSet
// sc-target, then upgraded the sidecar in place to log:v2. The SidecarSet and one pod are copied
// into testdata as dumped.

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func fixtureSidecarSet(t *testing.T) *v1beta1.SidecarSet {
	set := &v1beta1.SidecarSet{}
	readYAML(t, "testdata/sc-log.sidecarset.yaml", set)
	return set
}

func fixturePod(t *testing.T) *corev1.Pod {
	pod := &corev1.Pod{}
	readYAML(t, "testdata/sc-target-4r8tf.pod.yaml", pod)
	return pod
}

// TestGoldenSidecarSetHashes: the hashes OpenKruise stored on sc-log and on its pods, and the
// name of its latest revision, are what this package computes from sc-log's spec as stored.
func TestGoldenSidecarSetHashes(t *testing.T) {
	set := fixtureSidecarSet(t)
	hash, err := Hash(&set.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := set.Annotations[HashAnnotation]; hash != want {
		t.Errorf("Hash = %s, OpenKruise stored %s", hash, want)
	}
	noImage, err := HashWithoutImage(&set.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if want := set.Annotations[HashWithoutImageAnnotation]; noImage != want {
		t.Errorf("HashWithoutImage = %s, OpenKruise stored %s", noImage, want)
	}
	name, err := RevisionName(set, set.Status.CollisionCount)
	if err != nil {
		t.Fatal(err)
	}
	if want := set.Status.LatestRevision; name != want {
		t.Errorf("RevisionName = %s, OpenKruise named it %s", name, want)
	}
}

// beforeInjection is the fixture pod as the pod webhook received it: without the log sidecar and
// without the annotations OpenKruise's SidecarSet injection and upgrade wrote.
func beforeInjection(t *testing.T) *corev1.Pod {
	pod := fixturePod(t)
	pod.Spec.Containers = pod.Spec.Containers[1:]
	for k := range pod.Annotations {
		if strings.HasPrefix(k, "kruise.io/sidecarset-") {
			delete(pod.Annotations, k)
		}
	}
	pod.Status = corev1.PodStatus{}
	return pod
}

func mustTime(t *testing.T, s string) metav1.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return metav1.NewTime(tm)
}

// TestGoldenInjectAsUpgraded: injecting sc-log as it is now (log:v2) at the time OpenKruise last
// upgraded the sidecar gives the pod's sidecar container and its hash annotation byte for byte.
// (The API server's service-account admission added the token mount to the sidecar afterwards.)
func TestGoldenInjectAsUpgraded(t *testing.T) {
	dumped := fixturePod(t)
	res, err := Inject(beforeInjection(t), []*v1beta1.SidecarSet{fixtureSidecarSet(t)},
		Options{Now: mustTime(t, "2026-11-30T23:47:55Z")})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{HashAnnotation, InjectedListAnnotation} {
		if got, want := res.Pod.Annotations[key], dumped.Annotations[key]; got != want {
			t.Errorf("annotation %s:\n got %s\nwant %s", key, got, want)
		}
	}
	want := dumped.Spec.DeepCopy()
	want.Containers[0].VolumeMounts = nil
	if !equality.Semantic.DeepEqual(&res.Pod.Spec, want) {
		t.Errorf("spec differs from OpenKruise's:\n%s", diff.Diff(want, &res.Pod.Spec))
	}
}

// TestGoldenInjectAsCreated: injecting sc-log as it was when the pods were created (log:v1) at
// their creation time gives the hash-without-image annotation OpenKruise wrote then, byte for
// byte: only the image changed since, so the hash without image is the same.
func TestGoldenInjectAsCreated(t *testing.T) {
	dumped := fixturePod(t)
	v1 := fixtureSidecarSet(t)
	v1.Spec.Containers[0].Image = "example.com/log:v1"
	hash, err := Hash(&v1.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if hash == v1.Annotations[HashAnnotation] {
		t.Fatalf("an image change must change Hash")
	}
	v1.Annotations[HashAnnotation] = hash
	res, err := Inject(beforeInjection(t), []*v1beta1.SidecarSet{v1},
		Options{Now: mustTime(t, "2026-11-30T23:47:54Z")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Pod.Annotations[HashWithoutImageAnnotation], dumped.Annotations[HashWithoutImageAnnotation]; got != want {
		t.Errorf("annotation %s:\n got %s\nwant %s", HashWithoutImageAnnotation, got, want)
	}
	if got := res.Pod.Spec.Containers[0].Image; got != "example.com/log:v1" {
		t.Errorf("sidecar image %s, want example.com/log:v1", got)
	}
}
