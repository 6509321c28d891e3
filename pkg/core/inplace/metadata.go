package inplace

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RestartedAtAnnotation is the template annotation `kubectl rollout restart` sets to ask for new
// containers. A metadata patch would satisfy the template without restarting anything, so a new or
// changed value forces a recreate instead.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// managedKeys are label/annotation keys that controllers set on live pods.
var managedKeys = []string{
	"controller-revision-hash",           // revision label, written by the workload controller
	"pod-template-hash",                  // Deployment/ReplicaSet revision label
	"pod-template-generation",            // DaemonSet revision label
	"statefulset.kubernetes.io/pod-name", // StatefulSet pod identity
	"apps.kubernetes.io/pod-index",       // StatefulSet pod ordinal
}

// managedPrefixes are key prefixes owned by Kruise on live pods (in-place update state and grace,
// lifecycle state, runtime meta reported by the daemon, …).
var managedPrefixes = []string{"apps.kruise.io/", "lifecycle.apps.kruise.io/"}

// templateKeys are keys under a managed prefix that a parent workload writes into the pod
// template, not onto live pods: a UnitedDeployment's revision and subset labels. They follow the
// template in place, as any template label does (the UnitedDeployment counts its updated pods by
// its revision label).
var templateKeys = []string{"apps.kruise.io/controller-revision-hash", "apps.kruise.io/subset-name"}

// ManagedKey reports whether a label or annotation key is owned by a controller on live pods. Such keys
// are left out of the metadata diff: their value on a pod is the controller's (the pod's revision, its
// lifecycle state, the in-place update record), so copying a template's value would fight the
// controller, and deleting a key the template lacks would erase its state.
func ManagedKey(key string) bool {
	if contains(managedKeys, key) {
		return true
	}
	if contains(templateKeys, key) {
		return false
	}
	for _, p := range managedPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// diffMetadata returns the changes that turn old into new, leaving out managed keys: a key added or
// changed maps to its new value, a key removed maps to nil; a key equal on both sides is left out (the
// empty string and an absent key are not equal). Nil when there is no change.
func diffMetadata(old, new map[string]string) map[string]*string {
	var diff map[string]*string
	set := func(k string, v *string) {
		if diff == nil {
			diff = map[string]*string{}
		}
		diff[k] = v
	}
	for k, nv := range new {
		if ov, ok := old[k]; (!ok || ov != nv) && !ManagedKey(k) {
			v := nv
			set(k, &v)
		}
	}
	for k := range old {
		if _, ok := new[k]; !ok && !ManagedKey(k) {
			set(k, nil)
		}
	}
	return diff
}

// planEnvFromMetadata returns, in template order, the containers with an env var read from a label or
// annotation that the update changes: they must restart to see the new value. Init containers have run
// already and are not restarted; but a sidecar (restartable) init container cannot be restarted in place,
// so one that reads a changed key gives a recreate reason instead.
func planEnvFromMetadata(spec *corev1.PodSpec, labels, annotations map[string]*string) (restart, reasons []string) {
	if len(labels) == 0 && len(annotations) == 0 {
		return nil, nil
	}
	for i := range spec.Containers {
		if readsChangedMetadata(&spec.Containers[i], labels, annotations) != "" {
			restart = append(restart, spec.Containers[i].Name)
		}
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		if path := readsChangedMetadata(c, labels, annotations); path != "" {
			reasons = append(reasons, fmt.Sprintf("spec.initContainers[%s].env reads %s, which changed", c.Name, path))
		}
	}
	return restart, reasons
}

// readsChangedMetadata returns the field path of the first env var of c read from a changed label or
// annotation, or "" when there is none.
func readsChangedMetadata(c *corev1.Container, labels, annotations map[string]*string) string {
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			continue
		}
		path := e.ValueFrom.FieldRef.FieldPath
		field, key, ok := splitSubscript(path)
		if !ok {
			continue
		}
		var changed map[string]*string
		switch field {
		case "metadata.labels":
			changed = labels
		case "metadata.annotations":
			changed = annotations
		}
		if _, ok := changed[key]; ok {
			return path
		}
	}
	return ""
}

// splitSubscript splits a downward-API field path of the form `field['key']`, as the kubelet parses it.
func splitSubscript(path string) (field, key string, ok bool) {
	if !strings.HasSuffix(path, "']") {
		return "", "", false
	}
	field, key, ok = strings.Cut(strings.TrimSuffix(path, "']"), "['")
	return field, key, ok
}

// MetadataEnv is the env of container c of pod that is read from the pod's labels and annotations,
// with the values the pod's metadata gives now (name → value; a missing key gives ""): what a
// container started now must see.
func MetadataEnv(pod *corev1.Pod, c *corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			continue
		}
		field, key, ok := splitSubscript(e.ValueFrom.FieldRef.FieldPath)
		switch {
		case !ok:
		case field == "metadata.labels":
			out[e.Name] = pod.Labels[key]
		case field == "metadata.annotations":
			out[e.Name] = pod.Annotations[key]
		}
	}
	return out
}
