package sidecarrules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func sidecar(name, image string) v1beta1.SidecarSetContainer {
	return v1beta1.SidecarSetContainer{Container: corev1.Container{Name: name, Image: image}}
}

func nativeSidecar(name, image string) v1beta1.SidecarSetContainer {
	c := sidecar(name, image)
	always := corev1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// TestHashKnownValues checks Hash and HashWithoutImage against the values OpenKruise's own unit
// tests pin: init containers count only when one of them is a native sidecar, and then all do.
func TestHashKnownValues(t *testing.T) {
	cases := []struct {
		name               string
		spec               v1beta1.SidecarSetSpec
		hash, withoutImage string
	}{{
		name: "containers",
		spec: v1beta1.SidecarSetSpec{Containers: []v1beta1.SidecarSetContainer{sidecar("container1", "test-image")}},
		hash: "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78",
	}, {
		name: "containers and plain init containers",
		spec: v1beta1.SidecarSetSpec{
			Containers:     []v1beta1.SidecarSetContainer{sidecar("container1", "test-image")},
			InitContainers: []v1beta1.SidecarSetContainer{sidecar("container1", "test-image")},
		},
		hash:         "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78",
		withoutImage: "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759",
	}, {
		name: "containers and native sidecar init containers",
		spec: v1beta1.SidecarSetSpec{
			Containers:     []v1beta1.SidecarSetContainer{sidecar("container1", "test-image")},
			InitContainers: []v1beta1.SidecarSetContainer{nativeSidecar("container1", "test-image")},
		},
		hash:         "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w",
		withoutImage: "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.spec.DeepCopy()
			if got, err := Hash(&tc.spec); err != nil || got != tc.hash {
				t.Errorf("Hash = %s, %v; want %s", got, err, tc.hash)
			}
			noImage, err := HashWithoutImage(&tc.spec)
			if err != nil || (tc.withoutImage != "" && noImage != tc.withoutImage) {
				t.Errorf("HashWithoutImage = %s, %v; want %s", noImage, err, tc.withoutImage)
			}
			changed := tc.spec.DeepCopy()
			for i := range changed.Containers {
				changed.Containers[i].Image = "new-image"
			}
			for i := range changed.InitContainers {
				changed.InitContainers[i].Image = "new-image"
			}
			if h, _ := Hash(changed); h == tc.hash {
				t.Errorf("Hash ignores an image change")
			}
			if h, _ := HashWithoutImage(changed); h != noImage {
				t.Errorf("HashWithoutImage depends on images")
			}
			if tc.spec.Containers[0].Image != before.Containers[0].Image {
				t.Errorf("hashing modified the spec")
			}
		})
	}
}

func TestSetHashPrefersTheAnnotation(t *testing.T) {
	set := &v1beta1.SidecarSet{Spec: v1beta1.SidecarSetSpec{Containers: []v1beta1.SidecarSetContainer{sidecar("c", "i")}}}
	computed, _ := Hash(&set.Spec)
	if got, _ := SetHash(set); got != computed {
		t.Errorf("without annotation SetHash = %s, want the computed %s", got, computed)
	}
	set.Annotations = map[string]string{HashAnnotation: "stored", HashWithoutImageAnnotation: "stored-ni"}
	if got, _ := SetHash(set); got != "stored" {
		t.Errorf("SetHash = %s, want the stored annotation", got)
	}
	if got, _ := SetHashWithoutImage(set); got != "stored-ni" {
		t.Errorf("SetHashWithoutImage = %s, want the stored annotation", got)
	}
}
