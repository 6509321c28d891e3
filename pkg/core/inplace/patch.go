package inplace

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// RevisionLabel is the pod label holding the revision a pod runs (Kubernetes' own key).
const RevisionLabel = "controller-revision-hash"

// PodTemplateHashLabel is the pod label holding the hash of the revision a CloneSet pod runs.
const PodTemplateHashLabel = "pod-template-hash"

// The engine's writes never fight the kubelet, which patches pod status constantly and without
// preconditions:
//   - condition changes are strategic-merge patches of pods/status, merged by condition type, so a
//     concurrent kubelet write neither conflicts nor is overwritten (a JSON merge patch would replace
//     the whole conditions list);
//   - the spec change is a JSON patch whose `test` operations check exactly what the update relies
//     on (the pod's revision label and each changed container's current image) instead of a
//     resourceVersion precondition that every status write would break.

// ConditionPatch returns a strategic-merge patch for pods/status that sets condition typ to status,
// and, when status is False, also sets Ready False in the same write so the pod leaves Service
// endpoints at once. Its message differs from the kubelet's, so the kubelet reconciles Ready and
// writes its own (reason ReadinessGatesNotReady or ContainersNotReady) once it has seen the gate.
func ConditionPatch(typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) ([]byte, error) {
	return ConditionPatchWithMetadata(typ, status, reason, message, now, nil, nil)
}

// ConditionPatchWithMetadata is ConditionPatch that also sets labels and annotations (pods/status
// writes a pod's labels and annotations too).
func ConditionPatchWithMetadata(typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string, now time.Time,
	labels, annotations map[string]string) ([]byte, error) {
	return conditionPatch(typ, status, reason, message, now, status == corev1.ConditionFalse, labels, annotations)
}

// GatePatch returns a strategic-merge patch for pods/status that sets readiness gate typ False
// and leaves Ready to the kubelet: a kubelet that sees the gate False reports the pod not Ready
// itself, and no Ready it did not compute is left for it to overwrite.
func GatePatch(typ corev1.PodConditionType, reason, message string, now time.Time) ([]byte, error) {
	return conditionPatch(typ, corev1.ConditionFalse, reason, message, now, false, nil, nil)
}

// ReadyPatch returns a strategic-merge patch for pods/status that sets Ready False alone.
func ReadyPatch(reason, message string, now time.Time) ([]byte, error) {
	return conditionPatch(corev1.PodReady, corev1.ConditionFalse, reason, message, now, false, nil, nil)
}

func conditionPatch(typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string, now time.Time, ready bool,
	labels, annotations map[string]string) ([]byte, error) {
	ts := metav1.NewTime(now)
	conds := []corev1.PodCondition{{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: ts}}
	if ready {
		conds = append(conds, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reason,
			Message: message, LastTransitionTime: ts})
	}
	patch := map[string]any{"status": map[string]any{"conditions": conds}}
	meta := map[string]any{}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	if len(meta) > 0 {
		patch["metadata"] = meta
	}
	return json.Marshal(patch)
}

// OpenPatch returns a strategic-merge patch for pods/status that sets every condition in typs True
// in one write (a new pod's readiness gates).
func OpenPatch(reason string, now time.Time, typs ...corev1.PodConditionType) ([]byte, error) {
	ts := metav1.NewTime(now)
	conds := make([]corev1.PodCondition, 0, len(typs))
	for _, t := range typs {
		conds = append(conds, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: ts})
	}
	return json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
}

// jsonPatchOp is one RFC 6902 operation.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// escape encodes a map key as a JSON-pointer token.
func escape(key string) string {
	return pointerEscaper.Replace(key)
}

// pointerEscaper escapes a JSON pointer token (RFC 6901); built once, not per key.
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// SpecPatch returns the JSON patch that applies spec to pod: it checks the pod still has the
// revision label value and container images it was planned against (the API server rejects the
// patch otherwise, and nothing is written), then sets the new images, the label and annotation
// changes, the revision labels (revisionLabels, from Options.RevisionLabels) and the in-place
// update state annotation. A deferred update the pod
// still carries (Deferred) is removed: spec replaces it (see UpdateSpec.Then).
func SpecPatch(pod *corev1.Pod, spec *UpdateSpec, state *appspub.InPlaceUpdateState, revisionLabels map[string]string) ([]byte, error) {
	ops := revisionTest(pod)
	images, err := imageOps(pod, spec.ContainerImages)
	if err != nil {
		return nil, err
	}
	ops = append(ops, images...)
	ops = append(ops, metadataOps("labels", pod.Labels, spec.Labels, revisionLabels)...)
	stateJSON, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	ops = append(ops, metadataOps("annotations", pod.Annotations, withDelete(spec.Annotations, appspub.InPlaceUpdateGraceKey),
		map[string]string{appspub.InPlaceUpdateStateKey: string(stateJSON)})...)
	return json.Marshal(ops)
}

// ContainersPatch returns the JSON patch that sets the images of some of pod's containers and
// annotations, after checking each changed container's current image as SpecPatch does, and
// nothing of the pod's revision: the in-place update of containers that are not the workload's own
// (a SidecarSet's sidecars), whose progress the caller records in annotations of its own.
func ContainersPatch(pod *corev1.Pod, images, annotations map[string]string) ([]byte, error) {
	ops, err := imageOps(pod, images)
	if err != nil {
		return nil, err
	}
	ops = append(ops, metadataOps("annotations", pod.Annotations, nil, annotations)...)
	return json.Marshal(ops)
}

// revisionTest checks the pod's revision label is still what the caller saw.
func revisionTest(pod *corev1.Pod) []jsonPatchOp {
	if rev, ok := pod.Labels[RevisionLabel]; ok {
		return []jsonPatchOp{{Op: "test", Path: "/metadata/labels/" + escape(RevisionLabel), Value: rev}}
	}
	return nil
}

// imageOps sets container images, each after checking the container and its current image.
func imageOps(pod *corev1.Pod, images map[string]string) ([]jsonPatchOp, error) {
	var ops []jsonPatchOp
	for _, name := range keysOf(images) {
		i := containerIndex(pod, name)
		if i < 0 {
			return nil, fmt.Errorf("pod %s/%s has no container %q to update", pod.Namespace, pod.Name, name)
		}
		path := fmt.Sprintf("/spec/containers/%d/image", i)
		ops = append(ops,
			jsonPatchOp{Op: "test", Path: fmt.Sprintf("/spec/containers/%d/name", i), Value: name},
			jsonPatchOp{Op: "test", Path: path, Value: pod.Spec.Containers[i].Image},
			jsonPatchOp{Op: "replace", Path: path, Value: images[name]})
	}
	return ops, nil
}

// withDelete returns changes plus the deletion of key.
func withDelete(changes map[string]*string, key string) map[string]*string {
	out := make(map[string]*string, len(changes)+1)
	for k, v := range changes {
		out[k] = v
	}
	out[key] = nil
	return out
}

// metadataOps turns label or annotation changes (nil value = delete) plus forced values into JSON
// patch operations against the pod's current map.
func metadataOps(field string, current map[string]string, changes map[string]*string, force map[string]string) []jsonPatchOp {
	want := map[string]*string{}
	for k, v := range changes {
		want[k] = v
	}
	for k, v := range force {
		want[k] = &v
	}
	var ops []jsonPatchOp
	if current == nil {
		values := map[string]string{}
		for k, v := range want {
			if v != nil {
				values[k] = *v
			}
		}
		if len(values) == 0 {
			return nil
		}
		return []jsonPatchOp{{Op: "add", Path: "/metadata/" + field, Value: values}}
	}
	for _, k := range keysOf(want) {
		path := "/metadata/" + field + "/" + escape(k)
		_, exists := current[k]
		switch v := want[k]; {
		case v == nil && exists:
			ops = append(ops, jsonPatchOp{Op: "remove", Path: path})
		case v != nil:
			ops = append(ops, jsonPatchOp{Op: "add", Path: path, Value: *v}) // add replaces an existing member
		}
	}
	return ops
}

func containerIndex(pod *corev1.Pod, name string) int {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return i
		}
	}
	return -1
}

func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// PodCondition returns pod's condition of type typ, or nil.
func PodCondition(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// ConditionIs reports whether pod has the condition typ with status.
func ConditionIs(pod *corev1.Pod, typ corev1.PodConditionType, status corev1.ConditionStatus) bool {
	c := PodCondition(pod, typ)
	return c != nil && c.Status == status
}
