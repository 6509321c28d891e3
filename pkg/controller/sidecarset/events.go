package sidecarset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// podView is what the controller reads of a pod: a pod update that changes none of it (most of
// the kubelet's status writes, say a probe time) does not reconcile the pod's SidecarSets.
type podView struct {
	Annotations, Labels map[string]string
	Deleting            bool
	Phase               corev1.PodPhase
	Ready               corev1.ConditionStatus
	Images              []string
	Statuses            []containerView
}

type containerView struct {
	Name, Image, ImageID string
	Ready                bool
}

func viewOf(p *corev1.Pod) podView {
	v := podView{Annotations: p.Annotations, Labels: p.Labels, Deleting: p.DeletionTimestamp != nil, Phase: p.Status.Phase}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			v.Ready = c.Status
		}
	}
	for _, c := range p.Spec.Containers {
		v.Images = append(v.Images, c.Image)
	}
	for _, cs := range p.Status.ContainerStatuses {
		v.Statuses = append(v.Statuses, containerView{Name: cs.Name, Image: cs.Image, ImageID: cs.ImageID, Ready: cs.Ready})
	}
	return v
}

// podChanged reports whether an update of a pod changes what the controller reads of it.
func podChanged(old, new *corev1.Pod) bool {
	return !equality.Semantic.DeepEqual(viewOf(old), viewOf(new))
}
