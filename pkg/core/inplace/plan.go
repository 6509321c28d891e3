package inplace

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/pkg/core/revision"
)

// Options tunes what may change in place.
type Options struct {
	// VerticalScaling allows the CPU and memory requests and limits of containers to change in place,
	// through the pods/resize subresource. Without it any resource change forces a recreate. Set it only
	// when API discovery found pods/resize.
	VerticalScaling bool
	// EnvFromMetadata allows a container whose env reads a changed label or annotation to be
	// restarted in place although its image does not change (OpenKruise's InPlaceUpdateEnvFromMetadata);
	// only kruise-daemon can restart such a container. Without it the change recreates the pod, so
	// that no container keeps a stale value.
	EnvFromMetadata bool
	// ShortRevisionHash: pods carry the revision's hash (the last part of its name) in RevisionLabel
	// instead of its name (OpenKruise's CloneSetShortHash). Either form is read as the revision.
	ShortRevisionHash bool
	// PodTemplateHash: pods also carry the revision's hash in PodTemplateHashLabel, which Kruise
	// Rollouts selects canary and stable pods by (CloneSet pods, as OpenKruise labels them).
	PodTemplateHash bool
}

// RevisionLabels returns the labels that mark a pod as running revision rev under o: RevisionLabel,
// and PodTemplateHashLabel with PodTemplateHash.
func (o Options) RevisionLabels(rev string) map[string]string {
	hash := revision.ShortHash(rev)
	labels := map[string]string{RevisionLabel: rev}
	if o.ShortRevisionHash {
		labels[RevisionLabel] = hash
	}
	if o.PodTemplateHash {
		labels[PodTemplateHashLabel] = hash
	}
	return labels
}

// AtRevision reports whether a pod's RevisionLabel value names revision rev: its name, or its hash
// (pods labelled under OpenKruise's CloneSetShortHash).
func AtRevision(label, rev string) bool {
	return label != "" && (label == rev || label == revision.ShortHash(rev))
}

// UpdateSpec is what an in-place update changes on a pod. A nil map or slice means "nothing of this
// kind changes"; an UpdateSpec with all of them empty is a revision-only update (IsRevisionOnly).
// Its JSON form is part of the apps.kruise.io/inplace-update-grace annotation (Deferred).
type UpdateSpec struct {
	// Revision is the name of the revision the pod moves to.
	Revision string `json:"revision"`
	// ContainerImages maps a container name to its new image, for containers whose image changes.
	ContainerImages map[string]string `json:"containerImages,omitempty"`
	// ContainerResources maps a container name to its new resource requirements, for containers whose
	// CPU or memory requests or limits change. Only set with Options.VerticalScaling.
	ContainerResources map[string]corev1.ResourceRequirements `json:"containerResources,omitempty"`
	// Labels are the template label changes to apply: a nil value deletes the key.
	Labels map[string]*string `json:"labels,omitempty"`
	// Annotations are the template annotation changes to apply: a nil value deletes the key.
	Annotations map[string]*string `json:"annotations,omitempty"`
	// EnvFromMetadataContainers lists, in template order, the containers with an env var whose value
	// comes from a label or annotation (fieldRef metadata.labels['k'] / metadata.annotations['k']) that
	// this update changes. Env vars are resolved only when a container starts, so each of these must
	// restart to see the new value, even when its image does not change (OpenKruise's
	// InPlaceUpdateEnvFromMetadata). A container also in ContainerImages restarts once, for its image.
	EnvFromMetadataContainers []string `json:"envFromMetadataContainers,omitempty"`
}

// WithMetadata returns s with the given labels and annotations also set; s itself when there are
// none (an UpdateSpec may be shared by many pods and is never modified).
func (s *UpdateSpec) WithMetadata(labels, annotations map[string]string) *UpdateSpec {
	if len(labels) == 0 && len(annotations) == 0 {
		return s
	}
	out := *s
	out.Labels, out.Annotations = maps.Clone(s.Labels), maps.Clone(s.Annotations)
	set := func(m *map[string]*string, kv map[string]string) {
		if len(kv) > 0 && *m == nil {
			*m = map[string]*string{}
		}
		for k, v := range kv {
			(*m)[k] = &v
		}
	}
	set(&out.Labels, labels)
	set(&out.Annotations, annotations)
	return &out
}

// IsRevisionOnly reports whether the update changes nothing on the pod but its revision.
func (s *UpdateSpec) IsRevisionOnly() bool {
	return len(s.ContainerImages) == 0 && len(s.ContainerResources) == 0 && len(s.Labels) == 0 &&
		len(s.Annotations) == 0 && len(s.EnvFromMetadataContainers) == 0
}

// RestartsContainers reports whether the update changes a container: an image, resources, or
// metadata read into its env (a restart).
func (s *UpdateSpec) RestartsContainers() bool {
	return len(s.ContainerImages) > 0 || len(s.ContainerResources) > 0 || len(s.EnvFromMetadataContainers) > 0
}

// UpdatesEnvFromMetadata reports whether some container must restart to see changed metadata.
func (s *UpdateSpec) UpdatesEnvFromMetadata() bool { return len(s.EnvFromMetadataContainers) > 0 }

// Decision is the outcome of Plan: either Spec is set and RecreateReasons is empty (the pod can be
// updated in place), or Spec is nil and RecreateReasons says, field by field, why it cannot.
type Decision struct {
	// Spec is the in-place update, or nil when the pod must be recreated.
	Spec *UpdateSpec
	// RecreateReasons name each field path that rules out an in-place update.
	RecreateReasons []string
}

// InPlace reports whether the pod can be updated in place.
func (d Decision) InPlace() bool { return d.Spec != nil }

// Plan compares the pod template of the pod's current revision (oldTemplate) with that of the target
// revision newRevision (newTemplate) and decides whether an in-place update can bring the pod there.
//
// Invariants:
//   - In place only if the templates differ in nothing but container images (matched by container
//     name), template labels and annotations, and with opts.VerticalScaling the CPU/memory requests
//     and limits of containers; otherwise the Decision lists a reason for each other difference.
//   - Images are compared as strings: a different tag or digest is a change, the same string is not.
//   - Containers added, removed or renamed, and containers reordered even with identical content, force
//     a recreate (see planContainers).
//   - A resize that would change the pod's QoS class forces a recreate: the API server rejects it.
//   - A changed `kubectl.kubernetes.io/restartedAt` annotation forces a recreate: it asks for new
//     containers, which a metadata patch would not give.
//   - Identical templates give an UpdateSpec with no changes (a revision-only update).
//   - A nil template forces a recreate.
func Plan(oldTemplate, newTemplate *corev1.PodTemplateSpec, newRevision string, opts Options) Decision {
	if oldTemplate == nil || newTemplate == nil {
		return Decision{RecreateReasons: []string{"pod template missing"}}
	}
	var reasons []string
	reasons = append(reasons, compareFields("metadata", oldTemplate.ObjectMeta, newTemplate.ObjectMeta,
		"labels", "annotations")...)
	reasons = append(reasons, compareFields("spec", oldTemplate.Spec, newTemplate.Spec, "containers")...)
	cs := planContainers(oldTemplate.Spec.Containers, newTemplate.Spec.Containers, opts)
	reasons = append(reasons, cs.reasons...)
	if len(cs.resources) > 0 {
		reasons = append(reasons, checkQOS(&oldTemplate.Spec, &newTemplate.Spec)...)
	}
	labels := diffMetadata(oldTemplate.Labels, newTemplate.Labels)
	annotations := diffMetadata(oldTemplate.Annotations, newTemplate.Annotations)
	if v, ok := annotations[RestartedAtAnnotation]; ok && v != nil {
		reasons = append(reasons, "metadata.annotations["+RestartedAtAnnotation+"] changed: a restart was requested")
	}
	restart, envReasons := planEnvFromMetadata(&newTemplate.Spec, labels, annotations)
	reasons = append(reasons, envReasons...)
	if !opts.EnvFromMetadata {
		for _, name := range restart {
			if _, restarts := cs.images[name]; !restarts {
				reasons = append(reasons, fmt.Sprintf("spec.containers[%s].env reads a changed label or annotation: restarting the "+
					"container without an image change needs kruise-daemon (InPlaceUpdateEnvFromMetadata)", name))
			}
		}
	}
	if len(reasons) > 0 {
		return Decision{RecreateReasons: reasons}
	}
	return Decision{Spec: &UpdateSpec{
		Revision:                  newRevision,
		ContainerImages:           cs.images,
		ContainerResources:        cs.resources,
		Labels:                    labels,
		Annotations:               annotations,
		EnvFromMetadataContainers: restart,
	}}
}
