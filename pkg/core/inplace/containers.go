package inplace

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// containerChanges is what planContainers found: allowed changes, or reasons to recreate.
type containerChanges struct {
	images    map[string]string
	resources map[string]corev1.ResourceRequirements
	reasons   []string
}

// planContainers matches the old and new containers by name and collects their differences.
//
// The containers must have the same names in the same order. A reordering, even of identical
// containers, forces a recreate: the API server rejects a pod update that reorders containers (only
// images may change on a live pod), and the order is behaviour the kubelet honours (containers start in
// order, and a blocking postStart hook holds the later ones), so a pod kept with the old order would
// never match its revision.
func planContainers(oldCs, newCs []corev1.Container, opts Options) containerChanges {
	var ch containerChanges
	oldNames, newNames := containerNames(oldCs), containerNames(newCs)
	ch.reasons = append(ch.reasons, duplicateReasons(oldNames, "old")...)
	ch.reasons = append(ch.reasons, duplicateReasons(newNames, "new")...)
	if len(ch.reasons) > 0 {
		return ch
	}
	for _, n := range oldNames {
		if !contains(newNames, n) {
			ch.reasons = append(ch.reasons, fmt.Sprintf("spec.containers: container %q removed", n))
		}
	}
	for _, n := range newNames {
		if !contains(oldNames, n) {
			ch.reasons = append(ch.reasons, fmt.Sprintf("spec.containers: container %q added", n))
		}
	}
	if len(ch.reasons) > 0 {
		return ch
	}
	for i := range oldNames {
		if oldNames[i] != newNames[i] {
			return containerChanges{reasons: []string{fmt.Sprintf("spec.containers: order changed from [%s] to [%s]",
				strings.Join(oldNames, " "), strings.Join(newNames, " "))}}
		}
	}
	for i := range oldCs {
		ch.compare(&oldCs[i], &newCs[i], opts)
	}
	return ch
}

// compare records the differences between two containers of the same name.
func (ch *containerChanges) compare(o, n *corev1.Container, opts Options) {
	path := "spec.containers[" + n.Name + "]"
	ch.reasons = append(ch.reasons, compareFields(path, *o, *n, "image", "resources")...)
	if o.Image != n.Image {
		if ch.images == nil {
			ch.images = map[string]string{}
		}
		ch.images[n.Name] = n.Image
	}
	if equality.Semantic.DeepEqual(o.Resources, n.Resources) {
		return
	}
	if !opts.VerticalScaling {
		ch.reasons = append(ch.reasons, path+".resources changed")
		return
	}
	if r := resizeReasons(path+".resources", &o.Resources, &n.Resources); len(r) > 0 {
		ch.reasons = append(ch.reasons, r...)
		return
	}
	if ch.resources == nil {
		ch.resources = map[string]corev1.ResourceRequirements{}
	}
	ch.resources[n.Name] = *n.Resources.DeepCopy()
}

func containerNames(cs []corev1.Container) []string {
	names := make([]string, len(cs))
	for i := range cs {
		names[i] = cs[i].Name
	}
	return names
}

// duplicateReasons reports names that occur more than once: such a template is invalid, and matching
// by name would be ambiguous.
func duplicateReasons(names []string, which string) []string {
	var reasons []string
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
		if seen[n] == 2 {
			reasons = append(reasons, fmt.Sprintf("spec.containers: container name %q repeated in the %s template", n, which))
		}
	}
	return reasons
}
