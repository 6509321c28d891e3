package inplace

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// baseTemplate is a Burstable two-container template whose "app" container reads the label "tier" and
// the annotation "config" into env vars.
func baseTemplate() *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"config": "v1", "owner": "team-a"},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{
					Name:    "app",
					Image:   "registry.example/app:1.0",
					Command: []string{"/app"},
					Env: []corev1.EnvVar{
						{Name: "MODE", Value: "prod"},
						{Name: "TIER", ValueFrom: fieldRef("metadata.labels['tier']")},
						{Name: "CONFIG", ValueFrom: fieldRef("metadata.annotations['config']")},
						{Name: "POD", ValueFrom: fieldRef("metadata.name")},
					},
					Resources: resources("100m", "200m", "128Mi", "256Mi"),
				},
				{Name: "proxy", Image: "registry.example/proxy:2.0"},
			},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
}

// resources builds CPU/memory requirements; an empty string leaves the entry out.
func resources(cpuReq, cpuLim, memReq, memLim string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, e := range []struct {
		list corev1.ResourceList
		name corev1.ResourceName
		v    string
	}{
		{r.Requests, corev1.ResourceCPU, cpuReq}, {r.Limits, corev1.ResourceCPU, cpuLim},
		{r.Requests, corev1.ResourceMemory, memReq}, {r.Limits, corev1.ResourceMemory, memLim},
	} {
		if e.v != "" {
			e.list[e.name] = resource.MustParse(e.v)
		}
	}
	return r
}

// render prints a Decision canonically (sorted keys, dereferenced values, quantities as strings), so
// that tests compare and report decisions readably.
func render(d Decision) string {
	if d.Spec == nil {
		return "recreate:\n  " + strings.Join(d.RecreateReasons, "\n  ")
	}
	s := d.Spec
	var b strings.Builder
	fmt.Fprintf(&b, "in place to %q", s.Revision)
	if len(d.RecreateReasons) > 0 {
		fmt.Fprintf(&b, " WITH REASONS %q", d.RecreateReasons)
	}
	for _, k := range sortedKeys(s.ContainerImages) {
		fmt.Fprintf(&b, "\n  image %s=%s", k, s.ContainerImages[k])
	}
	for _, k := range sortedKeys(s.ContainerResources) {
		r := s.ContainerResources[k]
		fmt.Fprintf(&b, "\n  resources %s requests=%s limits=%s", k, renderList(r.Requests), renderList(r.Limits))
	}
	renderMeta(&b, "label", s.Labels)
	renderMeta(&b, "annotation", s.Annotations)
	if len(s.EnvFromMetadataContainers) > 0 {
		fmt.Fprintf(&b, "\n  restart for env %v", s.EnvFromMetadataContainers)
	}
	return b.String()
}

func renderMeta(b *strings.Builder, kind string, m map[string]*string) {
	for _, k := range sortedKeys(m) {
		if m[k] == nil {
			fmt.Fprintf(b, "\n  %s %s deleted", kind, k)
		} else {
			fmt.Fprintf(b, "\n  %s %s=%q", kind, k, *m[k])
		}
	}
}

func renderList(l corev1.ResourceList) string {
	var parts []string
	for _, k := range sortedKeys(l) {
		q := l[k]
		parts = append(parts, string(k)+":"+q.String())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// inPlace and recreate build expected Decisions for the table.
func inPlace(s UpdateSpec) Decision {
	if s.Revision == "" {
		s.Revision = "rev-2"
	}
	return Decision{Spec: &s}
}

func recreate(reasons ...string) Decision { return Decision{RecreateReasons: reasons} }

func strp(s string) *string { return ptr.To(s) }
