package sidecarrules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Hash returns the hash OpenKruise stores in a SidecarSet's HashAnnotation: SHA-256 of the JSON
// object {"containers": spec.containers} — plus "initContainers": spec.initContainers (all of
// them) when at least one is a native sidecar (restartPolicy Always) — in hex, encoded with
// rand.SafeEncodeString. Only the containers count: selectors, volumes and strategies do not.
// Hash expects the spec as stored, that is, defaulted.
func Hash(spec *v1beta1.SidecarSetSpec) (string, error) {
	return hashContainers(spec.Containers, spec.InitContainers)
}

// HashWithoutImage is Hash with every container's and init container's image left empty: two
// specs that differ only in images have the same HashWithoutImage.
func HashWithoutImage(spec *v1beta1.SidecarSetSpec) (string, error) {
	return hashContainers(withoutImages(spec.Containers), withoutImages(spec.InitContainers))
}

func hashContainers(containers, initContainers []v1beta1.SidecarSetContainer) (string, error) {
	m := map[string]any{"containers": containers}
	for i := range initContainers {
		if isNativeSidecar(&initContainers[i].Container) {
			m["initContainers"] = initContainers
			break
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return rand.SafeEncodeString(hex.EncodeToString(sum[:])), nil
}

func withoutImages(in []v1beta1.SidecarSetContainer) []v1beta1.SidecarSetContainer {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.SidecarSetContainer, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
		out[i].Image = ""
	}
	return out
}

// SetHash is the hash a SidecarSet injects with: its HashAnnotation (written by the SidecarSet
// webhook, or restored from a revision) when present, else Hash of its spec.
func SetHash(set *v1beta1.SidecarSet) (string, error) {
	if h := set.Annotations[HashAnnotation]; h != "" {
		return h, nil
	}
	return Hash(&set.Spec)
}

// SetHashWithoutImage is SetHash for HashWithoutImageAnnotation and HashWithoutImage.
func SetHashWithoutImage(set *v1beta1.SidecarSet) (string, error) {
	if h := set.Annotations[HashWithoutImageAnnotation]; h != "" {
		return h, nil
	}
	return HashWithoutImage(&set.Spec)
}

// isNativeSidecar reports whether an init container is a Kubernetes native sidecar.
func isNativeSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
