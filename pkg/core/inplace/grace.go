package inplace

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// Deferred is an in-place update waiting for its grace period, stored in the pod annotation
// apps.kruise.io/inplace-update-grace. With inPlaceUpdateStrategy.gracePeriodSeconds > 0 the engine
// turns the pod NotReady, moves its revision label and records the update here instead of changing
// its containers; a later reconcile applies it once GraceSeconds have passed since the state's
// updateTimestamp. Because it lives on the pod, the delay survives a restart of the manager.
type Deferred struct {
	UpdateSpec
	// GraceSeconds is the grace period the update waits for.
	GraceSeconds int32 `json:"graceSeconds"`
}

// DeferredOf reads the pod's deferred update; nil when it carries none.
func DeferredOf(pod *corev1.Pod) (*Deferred, error) {
	raw, ok := pod.Annotations[appspub.InPlaceUpdateGraceKey]
	if !ok {
		return nil, nil
	}
	d := &Deferred{}
	if err := json.Unmarshal([]byte(raw), d); err != nil {
		return nil, fmt.Errorf("pod %s/%s: annotation %s: %w", pod.Namespace, pod.Name, appspub.InPlaceUpdateGraceKey, err)
	}
	return d, nil
}

// Due is when the deferred update of a pod whose update started at start may be applied.
func (d *Deferred) Due(start time.Time) time.Time {
	return start.Add(time.Duration(d.GraceSeconds) * time.Second)
}

// Then is the update that takes a pod on which s is still pending (recorded, not applied to its
// containers) straight to next's revision: next's changes over s's. Containers whose resulting
// image is the one the pod runs are left out, so that reverting a template during the grace period
// restarts nothing.
func (s *UpdateSpec) Then(next *UpdateSpec, pod *corev1.Pod) *UpdateSpec {
	out := &UpdateSpec{Revision: next.Revision,
		ContainerImages:           overlay(s.ContainerImages, next.ContainerImages),
		ContainerResources:        overlay(s.ContainerResources, next.ContainerResources),
		Labels:                    overlay(s.Labels, next.Labels),
		Annotations:               overlay(s.Annotations, next.Annotations),
		EnvFromMetadataContainers: next.EnvFromMetadataContainers,
	}
	for name, img := range out.ContainerImages {
		if i := containerIndex(pod, name); i >= 0 && pod.Spec.Containers[i].Image == img {
			delete(out.ContainerImages, name)
		}
	}
	if len(out.ContainerImages) == 0 {
		out.ContainerImages = nil
	}
	return out
}

func overlay[V any](base, top map[string]V) map[string]V {
	if len(base) == 0 && len(top) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]V{}
	}
	maps.Copy(out, top)
	return out
}

// DeferPatch returns the JSON patch that starts a deferred update: after checking the revision
// label, it sets the given labels (the caller's own, e.g. a lifecycle state, and the revision
// labels of d's revision, from Options.RevisionLabels) and annotations and records the state and
// d; containers are not changed.
func DeferPatch(pod *corev1.Pod, d *Deferred, state *appspub.InPlaceUpdateState, labels, annotations map[string]string) ([]byte, error) {
	stateJSON, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	dJSON, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	forceAnnotations := maps.Clone(annotations)
	if forceAnnotations == nil {
		forceAnnotations = map[string]string{}
	}
	forceAnnotations[appspub.InPlaceUpdateStateKey] = string(stateJSON)
	forceAnnotations[appspub.InPlaceUpdateGraceKey] = string(dJSON)
	ops := revisionTest(pod)
	ops = append(ops, metadataOps("labels", pod.Labels, nil, labels)...)
	ops = append(ops, metadataOps("annotations", pod.Annotations, nil, forceAnnotations)...)
	return json.Marshal(ops)
}

// ResumePatch returns the JSON patch that applies the pod's deferred update d once its grace period
// is over: it checks the grace annotation is still the one read (so an update recorded meanwhile is
// never half-applied), sets the images and metadata changes and removes the annotation.
func ResumePatch(pod *corev1.Pod, d *Deferred) ([]byte, error) {
	raw, ok := pod.Annotations[appspub.InPlaceUpdateGraceKey]
	if !ok {
		return nil, fmt.Errorf("pod %s/%s has no deferred in-place update", pod.Namespace, pod.Name)
	}
	ops := []jsonPatchOp{{Op: "test", Path: "/metadata/annotations/" + escape(appspub.InPlaceUpdateGraceKey), Value: raw}}
	images, err := imageOps(pod, d.ContainerImages)
	if err != nil {
		return nil, err
	}
	ops = append(ops, images...)
	ops = append(ops, metadataOps("labels", pod.Labels, d.Labels, nil)...)
	ops = append(ops, metadataOps("annotations", pod.Annotations, withDelete(d.Annotations, appspub.InPlaceUpdateGraceKey), nil)...)
	return json.Marshal(ops)
}
