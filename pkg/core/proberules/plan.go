package proberules

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Finalizer is on every PodProbeMarker (OpenKruise's name): its probes leave the NodePodProbes
// before it goes.
const Finalizer = "kruise.io/node-pod-probe-cleanup"

// ProbeName is a probe's name in a NodePodProbe: "<marker>#<probe>".
func ProbeName(marker, probe string) string { return marker + "#" + probe }

// SplitProbeName is the inverse of ProbeName; ok is false for a name without '#'.
func SplitProbeName(name string) (marker, probe string, ok bool) { return strings.Cut(name, "#") }

// Eligible reports whether markers probe pod: scheduled, initialized, not ending (as OpenKruise).
func Eligible(pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil ||
		pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodInitialized {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Selects reports whether marker, not being deleted, selects pod.
func Selects(marker *v1alpha1.PodProbeMarker, pod *corev1.Pod) bool {
	return marker.DeletionTimestamp == nil && Matches(marker, pod)
}

// Matches reports whether marker's selector matches pod (same namespace). A selector that does not
// parse, and an empty one, match nothing (the webhook refuses both).
func Matches(marker *v1alpha1.PodProbeMarker, pod *corev1.Pod) bool {
	sel, ok := Selector(marker)
	return ok && marker.Namespace == pod.Namespace && sel.Matches(labels.Set(pod.Labels))
}

// Selector is marker's selector; ok is false when it is missing, empty or does not parse.
func Selector(marker *v1alpha1.PodProbeMarker) (sel labels.Selector, ok bool) {
	if marker.Spec.Selector == nil {
		return nil, false
	}
	sel, err := metav1.LabelSelectorAsSelector(marker.Spec.Selector)
	return sel, err == nil && !sel.Empty()
}

// Problem is a probe of a marker that cannot run on a pod (a named port the container lacks).
type Problem struct {
	Namespace, Marker, Probe string
	Pod                      string
	Reason                   string
}

// NodeSpec is the NodePodProbe spec for pods (all on one node): every eligible pod that a marker
// selects, with each of the markers' probes; pods by namespace and name, markers by name. A probe
// whose named port cannot be resolved is left out and returned as a Problem.
func NodeSpec(pods []*corev1.Pod, markers []*v1alpha1.PodProbeMarker) (v1alpha1.NodePodProbeSpec, []Problem) {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	markers = slices.Clone(markers)
	slices.SortFunc(markers, func(a, b *v1alpha1.PodProbeMarker) int { return strings.Compare(a.Name, b.Name) })
	var spec v1alpha1.NodePodProbeSpec
	var problems []Problem
	for _, pod := range pods {
		if !Eligible(pod) {
			continue
		}
		entry := v1alpha1.NodePodProbePodProbe{Name: pod.Name, Namespace: pod.Namespace, UID: string(pod.UID), IP: pod.Status.PodIP}
		for _, m := range markers {
			if !Selects(m, pod) {
				continue
			}
			for _, p := range m.Spec.Probes {
				resolved, err := Resolve(p, pod)
				if err != nil {
					problems = append(problems, Problem{Namespace: m.Namespace, Marker: m.Name, Probe: p.Name, Pod: pod.Name, Reason: err.Error()})
					continue
				}
				entry.Probes = append(entry.Probes, v1alpha1.NodePodProbeContainerProbe{Name: ProbeName(m.Name, p.Name),
					ContainerName: p.ContainerName, Probe: resolved})
			}
		}
		if len(entry.Probes) > 0 {
			spec.PodProbes = append(spec.PodProbes, entry)
		}
	}
	return spec, problems
}

// Resolve returns probe's spec with a named httpGet or tcpSocket port replaced by the number the
// probe's container declares.
func Resolve(probe v1alpha1.PodProbeMarkerProbe, pod *corev1.Pod) (v1alpha1.PodProbeMarkerProbeSpec, error) {
	out := *probe.Probe.DeepCopy()
	var port *intstr.IntOrString
	switch {
	case out.HTTPGet != nil:
		port = &out.HTTPGet.Port
	case out.TCPSocket != nil:
		port = &out.TCPSocket.Port
	}
	if port == nil || port.Type == intstr.Int {
		return out, nil
	}
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == probe.ContainerName })
	if i < 0 {
		return out, fmt.Errorf("the pod has no container %q to resolve port %q", probe.ContainerName, port.StrVal)
	}
	for _, p := range pod.Spec.Containers[i].Ports {
		if p.Name == port.StrVal {
			*port = intstr.FromInt32(p.ContainerPort)
			return out, nil
		}
	}
	return out, fmt.Errorf("container %q declares no port named %q", probe.ContainerName, port.StrVal)
}

// References reports whether spec holds a probe of marker (namespace/name).
func References(spec v1alpha1.NodePodProbeSpec, namespace, marker string) bool {
	for _, pp := range spec.PodProbes {
		if pp.Namespace != namespace {
			continue
		}
		for _, p := range pp.Probes {
			if m, _, _ := SplitProbeName(p.Name); m == marker {
				return true
			}
		}
	}
	return false
}
