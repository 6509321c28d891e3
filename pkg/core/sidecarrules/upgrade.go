package sidecarrules

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The in-place upgrade of injected sidecars, as OpenKruise v1.9.0 performs and records it: only
// images change (the API server allows nothing else in place); the pod's HashAnnotation entry of
// the SidecarSet moves to the SidecarSet's hash; InplaceUpdateStateAnnotation records, per
// SidecarSet, the image IDs the changed containers reported before, so that completion is seen
// when they report others; the pod condition SidecarSetUpgradable says, per SidecarSet, whether
// the pod can be upgraded at all.

// Upgrade is what one pod's in-place sidecar upgrade writes.
type Upgrade struct {
	// Images maps each sidecar container whose image changes to its new image.
	Images map[string]string
	// Annotations are the pod annotations to set: the hash entry, the in-place update state, the
	// injected list when the pod lacks it, and the SidecarSet's patchPodMetadata.
	Annotations map[string]string
}

// PlanUpgrade returns the cold upgrade of pod's sidecars to set (its containers' images; hot
// upgrade sidecars are not upgraded here), written at now. The pod is not modified.
func PlanUpgrade(pod *corev1.Pod, set *v1beta1.SidecarSet, now metav1.Time) (*Upgrade, error) {
	hash, err := SetHash(set)
	if err != nil {
		return nil, err
	}
	up := &Upgrade{Images: map[string]string{}, Annotations: map[string]string{}}
	var changed []string
	for i := range set.Spec.Containers {
		c := &set.Spec.Containers[i]
		if c.UpgradeStrategy.UpgradeType == v1beta1.SidecarSetHotUpgrade {
			continue
		}
		if pc := podContainer(pod, c.Name); pc != nil && pc.Image != c.Image {
			up.Images[c.Name] = c.Image
			changed = append(changed, c.Name)
		}
	}
	hashes, err := PodUpgradeSpecs(pod, HashAnnotation)
	if err != nil {
		return nil, err
	}
	hashes[set.Name] = UpgradeSpec{UpdateTimestamp: now, Hash: hash, SidecarSetName: set.Name,
		SidecarList: SidecarNames(set), ControllerRevision: set.Status.LatestRevision}
	if up.Annotations[HashAnnotation], err = encodeUpgradeSpecs(hashes); err != nil {
		return nil, err
	}
	state, err := upgradeState(pod, set.Name, hash, changed, now)
	if err != nil {
		return nil, err
	}
	up.Annotations[InplaceUpdateStateAnnotation] = state
	if pod.Annotations[InjectedListAnnotation] == "" {
		up.Annotations[InjectedListAnnotation] = set.Name
	}
	patched := maps.Clone(pod.Annotations)
	if patched == nil {
		patched = map[string]string{}
	}
	if err := patchMetadata(patched, set.Spec.PatchPodMetadata); err != nil {
		return nil, fmt.Errorf("SidecarSet %s: %w", set.Name, err)
	}
	for k, v := range patched {
		if pod.Annotations[k] != v {
			up.Annotations[k] = v
		}
	}
	return up, nil
}

// upgradeState is InplaceUpdateStateAnnotation with set's entry recording the image IDs of the
// changed containers; an entry already there keeps its revision and time, as in OpenKruise.
func upgradeState(pod *corev1.Pod, set, hash string, changed []string, now metav1.Time) (string, error) {
	states, err := podUpgradeStates(pod)
	if err != nil {
		states = map[string]*appspub.InPlaceUpdateState{} // OpenKruise starts afresh too
	}
	st := states[set]
	if st == nil {
		st = &appspub.InPlaceUpdateState{Revision: hash, UpdateTimestamp: now}
		states[set] = st
	}
	if st.LastContainerStatuses == nil {
		st.LastContainerStatuses = map[string]appspub.InPlaceUpdateContainerStatus{}
	}
	for _, name := range changed {
		st.LastContainerStatuses[name] = appspub.InPlaceUpdateContainerStatus{ImageID: imageID(pod, name)}
	}
	raw, err := json.Marshal(states)
	return string(raw), err
}

func podUpgradeStates(pod *corev1.Pod) (map[string]*appspub.InPlaceUpdateState, error) {
	states := map[string]*appspub.InPlaceUpdateState{}
	v, ok := pod.Annotations[InplaceUpdateStateAnnotation]
	if !ok {
		return states, nil
	}
	if err := json.Unmarshal([]byte(v), &states); err != nil {
		return nil, err
	}
	return states, nil
}

// SidecarNames are the sorted names a SidecarSet lists in a pod's hash entry: its containers and
// its native-sidecar init containers.
func SidecarNames(set *v1beta1.SidecarSet) []string {
	var names []string
	for i := range set.Spec.InitContainers {
		if isNativeSidecar(&set.Spec.InitContainers[i].Container) {
			names = append(names, set.Spec.InitContainers[i].Name)
		}
	}
	for i := range set.Spec.Containers {
		names = append(names, set.Spec.Containers[i].Name)
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// podContainersOf are the names of the pod containers set's sidecars are (hot-upgrade sidecars
// as their two copies).
func podContainersOf(set *v1beta1.SidecarSet) map[string]bool {
	names := map[string]bool{}
	for i := range set.Spec.Containers {
		for _, n := range injectedNames(&set.Spec.Containers[i], false) {
			names[n] = true
		}
	}
	return names
}

// Injected reports whether pod carries set's sidecars: its injected list names set, and it has
// each of set's containers (a hot-upgrade sidecar's two copies and its working-container entry).
func Injected(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	if !listed(pod, set.Name) {
		return false
	}
	working := hotUpgradeWorking(pod)
	for i := range set.Spec.Containers {
		c := &set.Spec.Containers[i]
		if c.UpgradeStrategy.UpgradeType == v1beta1.SidecarSetHotUpgrade {
			if _, ok := working[c.Name]; !ok {
				return false
			}
		}
		for _, n := range injectedNames(c, false) {
			if podContainer(pod, n) == nil {
				return false
			}
		}
	}
	return true
}

func listed(pod *corev1.Pod, set string) bool {
	for _, n := range strings.Split(pod.Annotations[InjectedListAnnotation], ",") {
		if n == set {
			return true
		}
	}
	return false
}

// Updated reports whether pod's sidecars of set are at set's hash (OpenKruise's
// IsPodSidecarUpdated).
func Updated(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	hash, err := SetHash(set)
	if err != nil {
		return false
	}
	specs, err := PodUpgradeSpecs(pod, HashAnnotation)
	return err == nil && specs[set.Name].Hash == hash
}

// Consistent reports whether pod's status shows what its spec asks of set's sidecars: a status for
// every container, and each sidecar running its spec image — a digest-pinned one whose image ID has
// the digest, any other (and a digest-pinned one whose image ID is another digest, as containerd
// reports the image's config digest) by an image ID that differs from the one recorded before its
// last in-place upgrade. names restricts the check to those containers (nil: all of set's).
//
// OpenKruise declares a digest-pinned sidecar inconsistent whenever its image ID lacks the digest,
// which on containerd is always (kruise#2570): such pods never count as ready there.
func Consistent(pod *corev1.Pod, set *v1beta1.SidecarSet, names map[string]bool) bool {
	if len(pod.Spec.Containers) != len(pod.Status.ContainerStatuses) {
		return false
	}
	if names == nil {
		names = podContainersOf(set)
	}
	states, err := podUpgradeStates(pod)
	if err != nil {
		return false
	}
	var last map[string]appspub.InPlaceUpdateContainerStatus
	if st := states[set.Name]; st != nil {
		last = st.LastContainerStatuses
	}
	judged := map[string]bool{}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if !names[c.Name] {
			continue
		}
		if digest, ok := imageDigest(c.Image); ok && strings.HasSuffix(imageID(pod, c.Name), digest) {
			continue // runs the pinned digest
		}
		judged[c.Name] = true
	}
	return upgradedSince(pod, judged, last)
}

// SidecarsUpgraded reports whether each injected sidecar of pod (a container with IS_INJECTED=true)
// runs the image its spec asks, judged by the image IDs every SidecarSet of the pod recorded before
// its last in-place upgrade (OpenKruise's IsSidecarContainerUpdateCompleted over all of them): what
// PodUnavailableBudget asks of a pod before it counts it available.
func SidecarsUpgraded(pod *corev1.Pod) bool {
	names := map[string]bool{}
	for i := range pod.Spec.Containers {
		if isInjected(&pod.Spec.Containers[i]) {
			names[pod.Spec.Containers[i].Name] = true
		}
	}
	if len(names) == 0 || pod.Annotations[InjectedListAnnotation] == "" {
		return true
	}
	if _, ok := pod.Annotations[InplaceUpdateStateAnnotation]; !ok {
		return true
	}
	states, err := podUpgradeStates(pod)
	if err != nil {
		return false
	}
	last := map[string]appspub.InPlaceUpdateContainerStatus{}
	for _, set := range strings.Split(pod.Annotations[InjectedListAnnotation], ",") {
		if st := states[set]; st != nil {
			maps.Copy(last, st.LastContainerStatuses)
		}
	}
	return upgradedSince(pod, names, last)
}

// upgradedSince reports whether none of the named containers still reports the image ID recorded
// before its upgrade while its spec asks another image.
func upgradedSince(pod *corev1.Pod, names map[string]bool, last map[string]appspub.InPlaceUpdateContainerStatus) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if !names[cs.Name] {
			continue
		}
		before, ok := last[cs.Name]
		if ok && before.ImageID == cs.ImageID && podContainer(pod, cs.Name).Image != cs.Image {
			return false
		}
	}
	return true
}

// Ready reports whether pod's sidecars of set are as their spec asks and the pod is Running
// (OpenKruise's IsPodStateConsistent and IsPodReady together, its "ready pod").
func Ready(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	return Consistent(pod, set, nil) && Running(pod, set)
}

// Running reports whether pod is running and ready and each hot-upgrade sidecar's idle copy runs
// the empty image (OpenKruise's IsPodReady).
func Running(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for i := range set.Spec.Containers {
		c := &set.Spec.Containers[i]
		if c.UpgradeStrategy.UpgradeType != v1beta1.SidecarSetHotUpgrade || c.UpgradeStrategy.HotUpgradeEmptyImage == "" {
			continue
		}
		_, idle := HotUpgradePair(pod, c.Name)
		if pc := podContainer(pod, idle); pc != nil && pc.Image != c.UpgradeStrategy.HotUpgradeEmptyImage {
			return false
		}
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ImagesOnly reports whether pod's sidecars of set differ from set in images at most (the pod's
// HashWithoutImageAnnotation entry equals set's): only then can they be upgraded in place.
func ImagesOnly(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	want, err := SetHashWithoutImage(set)
	if err != nil {
		return false
	}
	specs, err := PodUpgradeSpecs(pod, HashWithoutImageAnnotation)
	return err == nil && specs[set.Name].Hash == want
}

// InFlight reports whether one of pod's sidecars of set is still ready on an image it was not
// upgraded to yet: a previous upgrade the kubelet has not carried out.
func InFlight(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	names := podContainersOf(set)
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Ready && names[cs.Name] && !Consistent(pod, set, map[string]bool{cs.Name: true}) {
			return true
		}
	}
	return false
}

// Upgradable reports whether pod's sidecars of set can move to set in place now (OpenKruise's
// IsSidecarSetUpgradable): ImagesOnly, and not InFlight.
func Upgradable(pod *corev1.Pod, set *v1beta1.SidecarSet) bool {
	return ImagesOnly(pod, set) && !InFlight(pod, set)
}

// Reasons of the SidecarSetUpgradable condition.
const (
	ReasonAllUpgradable = "AllSidecarsetUpgradable"
	ReasonNotUpgradable = "UpdateImmutableField"
	// UpgradableCondition is the pod condition type.
	UpgradableCondition = corev1.PodConditionType("SidecarSetUpgradable")
)

// UpgradableConditionFor returns pod's SidecarSetUpgradable condition with set's entry of its
// message (a JSON map from SidecarSet name to whether it can upgrade the pod) set to upgradable:
// True while every SidecarSet can, else False. It reports whether the condition changes.
func UpgradableConditionFor(pod *corev1.Pod, set string, upgradable bool, now metav1.Time) (corev1.PodCondition, bool) {
	cond := corev1.PodCondition{Type: UpgradableCondition}
	var old *corev1.PodCondition
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == UpgradableCondition {
			old = &pod.Status.Conditions[i]
			cond = *old.DeepCopy()
		}
	}
	kv := map[string]bool{}
	if cond.Message != "" {
		if err := json.Unmarshal([]byte(cond.Message), &kv); err != nil {
			kv = map[string]bool{}
		}
	}
	kv[set] = upgradable
	all := true
	for _, v := range kv {
		all = all && v
	}
	status, reason := corev1.ConditionTrue, ReasonAllUpgradable
	if !all {
		status, reason = corev1.ConditionFalse, ReasonNotUpgradable
	}
	raw, _ := json.Marshal(kv) // a map of bools always encodes
	cond.Message, cond.Reason = string(raw), reason
	if cond.Status != status {
		cond.LastTransitionTime = now
	}
	cond.Status = status
	changed := old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message
	return cond, changed
}

func podContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

func imageID(pod *corev1.Pod, name string) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == name {
			return cs.ImageID
		}
	}
	return ""
}

// imageDigest returns the digest of a digest-pinned image reference (name@sha256:...).
func imageDigest(image string) (string, bool) {
	i := strings.LastIndexByte(image, '@')
	if i < 0 {
		return "", false
	}
	return image[i+1:], true
}
