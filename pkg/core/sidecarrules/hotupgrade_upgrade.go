package sidecarrules

import (
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The hot upgrade of a sidecar (upgradeStrategy.upgradeType HotUpgrade), as OpenKruise v1.9.0
// carries it out. Each such sidecar runs as two copies, <name>-1 and <name>-2: the working copy
// (named by the pod's WorkingHotUpgradeContainerAnnotation) runs the sidecar's image, the idle one
// its hotUpgradeEmptyImage. A new image goes in two in-place steps:
//
//  1. upgrade (PlanFullUpgrade, with the cold sidecars and the hash entry): the copy chosen by
//     hotUpgradeTarget — the idle one as a rule — gets the new image and becomes the working copy;
//     its version annotation becomes the SidecarSet's resourceVersion, its versionalt annotation
//     the other copy's version, and the other copy's versionalt annotation the resourceVersion
//     too. Both copies now run: the sidecar hands its work over from the old copy to the new one.
//  2. flip (PlanFlip), once FlipDue — the new copy runs its image and the pod is ready: the old
//     copy gets the hotUpgradeEmptyImage, its version annotation and the working copy's
//     versionalt annotation become "0". The hash entry is left as the upgrade wrote it.
//
// Both steps record, in InplaceUpdateStateAnnotation, the image IDs the changed copies reported
// before, as cold upgrades do, so that Consistent sees when the kubelet has restarted them. Only
// spec.containers are upgraded: OpenKruise never upgrades init containers (native sidecars) in
// place, hot or not.

// HotUpgradePair returns the working copy of hot-upgrade sidecar name in pod and the other one, as
// OpenKruise reads them: <name>-1 works when the pod's working annotation says so, otherwise
// (<name>-2 named, no entry, an unreadable annotation) <name>-2 does.
func HotUpgradePair(pod *corev1.Pod, name string) (working, other string) {
	n1, n2 := hotUpgradeNames(name)
	if hotUpgradeWorking(pod)[name] == n1 {
		return n1, n2
	}
	return n2, n1
}

// hotSidecars are set's hot-upgrade sidecars (spec.containers) that can be flipped: those with a
// hotUpgradeEmptyImage, which the SidecarSet webhook requires of them.
func hotSidecars(set *v1beta1.SidecarSet) []*v1beta1.SidecarSetContainer {
	var out []*v1beta1.SidecarSetContainer
	for i := range set.Spec.Containers {
		c := &set.Spec.Containers[i]
		if c.UpgradeStrategy.UpgradeType == v1beta1.SidecarSetHotUpgrade && c.UpgradeStrategy.HotUpgradeEmptyImage != "" {
			out = append(out, c)
		}
	}
	return out
}

// hotUpgradeTarget returns the copy of hot-upgrade sidecar c that an upgrade of pod writes the
// new image to, and the other copy (OpenKruise's findContainerToHotUpgrade): a copy on the empty
// image (<name>-1 first); else the only copy not ready — ready meaning its status is ready and
// it runs its spec image (Consistent) — ; else the copy that is not working. ok is false when the
// pod lacks a copy.
func hotUpgradeTarget(pod *corev1.Pod, set *v1beta1.SidecarSet, c *v1beta1.SidecarSetContainer) (target, other string, ok bool) {
	n1, n2 := hotUpgradeNames(c.Name)
	c1, c2 := podContainer(pod, n1), podContainer(pod, n2)
	if c1 == nil || c2 == nil {
		return "", "", false
	}
	empty := c.UpgradeStrategy.HotUpgradeEmptyImage
	switch {
	case c1.Image == empty:
		return n1, n2, true
	case c2.Image == empty:
		return n2, n1, true
	}
	ready1, ready2 := copyReady(pod, set, n1), copyReady(pod, set, n2)
	switch {
	case ready1 && !ready2:
		return n2, n1, true
	case !ready1 && ready2:
		return n1, n2, true
	}
	working, idle := HotUpgradePair(pod, c.Name)
	return idle, working, true
}

// copyReady reports whether container name of pod is ready and runs its spec image.
func copyReady(pod *corev1.Pod, set *v1beta1.SidecarSet, name string) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name {
			return cs.Ready && Consistent(pod, set, map[string]bool{name: true})
		}
	}
	return false
}

// PlanFullUpgrade returns the in-place upgrade of pod's sidecars to set written at now: PlanUpgrade
// (the cold sidecars, the hash entry, the in-place update state, the injected list, the
// patchPodMetadata) plus the first step of each hot-upgrade sidecar whose image changed. A
// hot-upgrade sidecar is left alone when its other copy — the working one, as a rule — already
// runs the SidecarSet's image. The pod is not modified.
func PlanFullUpgrade(pod *corev1.Pod, set *v1beta1.SidecarSet, now metav1.Time) (*Upgrade, error) {
	up, err := PlanUpgrade(pod, set, now)
	if err != nil {
		return nil, err
	}
	changed := make([]string, 0, len(up.Images))
	for name := range up.Images {
		changed = append(changed, name)
	}
	working := hotUpgradeWorking(pod)
	hot := false
	for i := range set.Spec.Containers {
		c := &set.Spec.Containers[i]
		if c.UpgradeStrategy.UpgradeType != v1beta1.SidecarSetHotUpgrade {
			continue
		}
		target, other, ok := hotUpgradeTarget(pod, set, c)
		if !ok || podContainer(pod, other).Image == c.Image {
			continue
		}
		hot = true
		// A copy that already has the image (a rollback onto the copy not flipped yet) still
		// becomes the working one, as in OpenKruise; only its spec is left as it is.
		if podContainer(pod, target).Image != c.Image {
			up.Images[target] = c.Image
		}
		changed = append(changed, target)
		working[c.Name] = target
		up.Annotations[VersionAnnotationPrefix+target] = set.ResourceVersion
		up.Annotations[VersionAltAnnotationPrefix+target] = pod.Annotations[VersionAnnotationPrefix+other]
		up.Annotations[VersionAltAnnotationPrefix+other] = set.ResourceVersion
	}
	if !hot {
		return up, nil
	}
	raw, err := json.Marshal(working)
	if err != nil {
		return nil, err
	}
	up.Annotations[WorkingHotUpgradeContainerAnnotation] = string(raw)
	hash, err := SetHash(set)
	if err != nil {
		return nil, err
	}
	if up.Annotations[InplaceUpdateStateAnnotation], err = upgradeState(pod, set.Name, hash, changed, now); err != nil {
		return nil, err
	}
	return up, nil
}

// HotUpgrading reports whether the idle copy of one of set's hot-upgrade sidecars in pod runs
// another image than the empty one: a hot upgrade whose old copy is not flipped yet (OpenKruise's
// isPodSidecarInHotUpgrading).
func HotUpgrading(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	for _, c := range hotSidecars(set) {
		_, idle := HotUpgradePair(pod, c.Name)
		if pc := podContainer(pod, idle); pc != nil && pc.Image != c.UpgradeStrategy.HotUpgradeEmptyImage {
			return true
		}
	}
	return false
}

// FlipDue reports whether pod's hot upgrade of set is done and its old copies are to be flipped to
// the empty image, as OpenKruise decides at each reconcile (whatever the update strategy says):
// HotUpgrading, set's sidecars other than the idle copies run their spec images (Consistent), and
// the pod is running and ready or, short of that, every container but the idle copies is ready
// (isHotUpgradingReady).
func FlipDue(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	if !HotUpgrading(pod, set) {
		return false
	}
	idle := map[string]bool{}
	for _, c := range hotSidecars(set) {
		_, other := HotUpgradePair(pod, c.Name)
		idle[other] = true
	}
	names := podContainersOf(set)
	for n := range idle {
		delete(names, n)
	}
	if !Consistent(pod, set, names) {
		return false
	}
	if runningAndReady(pod) {
		return true
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if !idle[cs.Name] && !cs.Ready {
			return false
		}
	}
	return true
}

// PlanFlip returns the second step of pod's hot upgrades of set, written at now: each idle copy
// not on the empty image gets it, its version annotation and the working copy's versionalt
// annotation become "0", and the in-place update state records the image IDs the flipped copies
// report now. Nil when no copy is to be flipped. The pod is not modified.
func PlanFlip(pod *corev1.Pod, set *v1beta1.SidecarSet, now metav1.Time) (*Upgrade, error) {
	f := &Upgrade{Images: map[string]string{}, Annotations: map[string]string{}}
	var changed []string
	for _, c := range hotSidecars(set) {
		working, idle := HotUpgradePair(pod, c.Name)
		pc := podContainer(pod, idle)
		if pc == nil || pc.Image == c.UpgradeStrategy.HotUpgradeEmptyImage {
			continue
		}
		f.Images[idle] = c.UpgradeStrategy.HotUpgradeEmptyImage
		changed = append(changed, idle)
		f.Annotations[VersionAnnotationPrefix+idle] = "0"
		f.Annotations[VersionAltAnnotationPrefix+working] = "0"
	}
	if len(changed) == 0 {
		return nil, nil
	}
	hash, err := SetHash(set)
	if err != nil {
		return nil, err
	}
	if f.Annotations[InplaceUpdateStateAnnotation], err = upgradeState(pod, set.Name, hash, changed, now); err != nil {
		return nil, err
	}
	return f, nil
}

// Patched returns a copy of pod with up applied to its spec and annotations: the pod as the API
// server keeps it after the patch, its status unchanged.
func Patched(pod *corev1.Pod, up *Upgrade) *corev1.Pod {
	out := pod.DeepCopy()
	for i := range out.Spec.Containers {
		if img, ok := up.Images[out.Spec.Containers[i].Name]; ok {
			out.Spec.Containers[i].Image = img
		}
	}
	if len(up.Annotations) > 0 && out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	maps.Copy(out.Annotations, up.Annotations)
	return out
}

// runningAndReady reports whether pod is Running with its Ready condition True.
func runningAndReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
