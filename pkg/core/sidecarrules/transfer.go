package sidecarrules

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// transferEnvs returns the env vars c's transferEnv copies from the pod's containers: for each
// entry, its envName and envNames (sorted, without duplicates) as defined in the source container,
// named by sourceContainerName or read from the pod field sourceContainerNameFrom.fieldRef. Names
// the source does not define, and entries whose fieldRef cannot be read, are skipped.
func transferEnvs(pod *corev1.Pod, c *v1beta1.SidecarSetContainer) []corev1.EnvVar {
	if len(c.TransferEnv) == 0 {
		return nil
	}
	inPod := map[string]corev1.EnvVar{}
	for _, pc := range pod.Spec.Containers {
		for _, e := range pc.Env {
			inPod[pc.Name+"/"+e.Name] = e
		}
	}
	var out []corev1.EnvVar
	for _, t := range c.TransferEnv {
		source := t.SourceContainerName
		if from := t.SourceContainerNameFrom; from != nil && from.FieldRef != nil {
			name, err := containerNameFromField(pod, from.FieldRef.FieldPath)
			if err != nil {
				continue
			}
			source = name
		}
		for _, name := range envNames(t) {
			if e, ok := inPod[source+"/"+name]; ok {
				out = append(out, *e.DeepCopy())
			}
		}
	}
	return out
}

func envNames(t v1beta1.SidecarSetTransferEnvVar) []string {
	seen := map[string]bool{}
	if t.EnvName != "" {
		seen[t.EnvName] = true
	}
	for _, n := range t.EnvNames {
		seen[n] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// containerNameFromField reads a pod label or annotation given as metadata.labels['<key>'] or
// metadata.annotations['<key>'], the only field paths OpenKruise accepts here.
func containerNameFromField(pod *corev1.Pod, fieldPath string) (string, error) {
	path, key, ok := splitSubscript(fieldPath)
	if !ok {
		return "", fmt.Errorf("unsupported fieldPath %q", fieldPath)
	}
	switch path {
	case "metadata.annotations":
		if errs := validation.IsQualifiedName(strings.ToLower(key)); len(errs) != 0 {
			return "", fmt.Errorf("invalid key in %s: %s", fieldPath, strings.Join(errs, ";"))
		}
		return pod.Annotations[key], nil
	case "metadata.labels":
		if errs := validation.IsQualifiedName(key); len(errs) != 0 {
			return "", fmt.Errorf("invalid key in %s: %s", fieldPath, strings.Join(errs, ";"))
		}
		return pod.Labels[key], nil
	}
	return "", fmt.Errorf("fieldPath %q does not support a subscript", fieldPath)
}

// splitSubscript splits "path['key']" into path and key.
func splitSubscript(fieldPath string) (string, string, bool) {
	if !strings.HasSuffix(fieldPath, "']") {
		return "", "", false
	}
	path, key, ok := strings.Cut(strings.TrimSuffix(fieldPath, "']"), "['")
	if !ok || path == "" {
		return "", "", false
	}
	return path, key, true
}
