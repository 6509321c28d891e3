package sidecarrules

import (
	"strings"
	"testing"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// TestInjectAnnotations: the pod annotations, byte for byte.
func TestInjectAnnotations(t *testing.T) {
	initPlain, initNative := sidecar("setup", "s:1"), nativeSidecar("proxy", "p:1")
	withInit := func() *v1beta1.SidecarSet {
		s := newSet("b-set", sidecar("log", "log:1"))
		s.Spec.InitContainers = []v1beta1.SidecarSetContainer{initPlain, initNative}
		s.Annotations = map[string]string{HashAnnotation: "h-b", HashWithoutImageAnnotation: "n-b"}
		s.Status.LatestRevision = "b-set-1"
		return s
	}
	cases := []struct {
		name                  string
		podAnnotations        map[string]string
		sets                  []*v1beta1.SidecarSet
		hash, noImage, listed string
	}{{
		name:    "native sidecar init containers are in the sidecar list, plain ones not",
		sets:    []*v1beta1.SidecarSet{withInit()},
		hash:    `{"b-set":{"updateTimestamp":"2026-01-02T03:04:05Z","hash":"h-b","sidecarSetName":"b-set","sidecarList":["log","proxy"],"controllerRevision":"b-set-1"}}`,
		noImage: `{"b-set":{"updateTimestamp":"2026-01-02T03:04:05Z","hash":"n-b","sidecarSetName":"b-set","sidecarList":["log","proxy"]}}`,
		listed:  "b-set",
	}, {
		name: "entries of other SidecarSets are kept, the older name→hash form read",
		podAnnotations: map[string]string{
			HashAnnotation:             `{"a-set":"old"}`,
			HashWithoutImageAnnotation: `{"a-set":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"x","sidecarSetName":"a-set","sidecarList":["a"]}}`,
			InjectedListAnnotation:     "c-set,a-set",
		},
		sets:    []*v1beta1.SidecarSet{withInit()},
		hash:    `{"a-set":{"updateTimestamp":null,"hash":"old","sidecarSetName":"a-set","sidecarList":null},"b-set":{"updateTimestamp":"2026-01-02T03:04:05Z","hash":"h-b","sidecarSetName":"b-set","sidecarList":["log","proxy"],"controllerRevision":"b-set-1"}}`,
		noImage: `{"a-set":{"updateTimestamp":"2025-01-01T00:00:00Z","hash":"x","sidecarSetName":"a-set","sidecarList":["a"]},"b-set":{"updateTimestamp":"2026-01-02T03:04:05Z","hash":"n-b","sidecarSetName":"b-set","sidecarList":["log","proxy"]}}`,
		listed:  "a-set,b-set,c-set",
	}, {
		name: "a SidecarSet without containers changes no annotation",
		sets: []*v1beta1.SidecarSet{newSet("empty")},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := appPod()
			pod.Annotations = tc.podAnnotations
			res, err := Inject(pod, tc.sets, Options{Now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{HashAnnotation: tc.hash, HashWithoutImageAnnotation: tc.noImage, InjectedListAnnotation: tc.listed} {
				if want == "" {
					want = tc.podAnnotations[key]
				}
				if got := res.Pod.Annotations[key]; got != want {
					t.Errorf("%s:\n got %s\nwant %s", key, got, want)
				}
			}
		})
	}
}

func TestInjectRefusesUnreadableHashAnnotation(t *testing.T) {
	pod := appPod()
	pod.Annotations = map[string]string{HashAnnotation: `["not a map"]`}
	_, err := Inject(pod, []*v1beta1.SidecarSet{newSet("s", sidecar("log", "l"))}, Options{})
	if err == nil || !strings.Contains(err.Error(), HashAnnotation) {
		t.Fatalf("err = %v, want one naming %s", err, HashAnnotation)
	}
}

// TestInjectConflicts: two SidecarSets injecting the same container name are refused, naming both.
func TestInjectConflicts(t *testing.T) {
	hot := sidecar("mesh", "m:1")
	hot.UpgradeStrategy.UpgradeType = v1beta1.SidecarSetHotUpgrade
	initLog := newSet("c")
	initLog.Spec.InitContainers = []v1beta1.SidecarSetContainer{sidecar("log", "l:2")}
	cases := []struct {
		name string
		sets []*v1beta1.SidecarSet
		want string
	}{
		{"same container", []*v1beta1.SidecarSet{newSet("b", sidecar("log", "l:1")), newSet("a", sidecar("log", "l:2"))}, "SidecarSets a and b both inject a container named log"},
		{"container and init container", []*v1beta1.SidecarSet{newSet("a", sidecar("log", "l:1")), initLog}, "SidecarSets a and c both inject a container named log"},
		{"hot-upgrade copy", []*v1beta1.SidecarSet{newSet("a", hot), newSet("b", sidecar("mesh-2", "x"))}, "SidecarSets a and b both inject a container named mesh-2"},
		{"twice in one SidecarSet", []*v1beta1.SidecarSet{newSet("a", sidecar("log", "1"), sidecar("log", "2"))}, "SidecarSets a and a both inject a container named log"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Inject(appPod(), tc.sets, Options{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// SidecarSets that do not both select the pod do not conflict.
	other := newSet("b", sidecar("log", "l:2"))
	other.Spec.Selector.MatchLabels["app"] = "other"
	if _, err := Inject(appPod(), []*v1beta1.SidecarSet{newSet("a", sidecar("log", "l:1")), other}, Options{}); err != nil {
		t.Fatalf("unexpected conflict: %v", err)
	}
}
