package defaulting

import (
	"context"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get

// crrDefaulter completes a new ContainerRecreateRequest from its pod: the labels that tie it to
// the pod and its node (kruise-daemon watches its node's), each container's current ID and restart
// count (how the daemon tells the recreated container), and the container's preStop hook and ports.
// Those are read-only, as in OpenKruise: a request that sets a container's preStop, ports or
// statusContext is refused (else whoever may create a request could run any command in a container,
// bypassing pods/exec, or send requests from the node). A request for a pod that is missing,
// terminating, not scheduled, never restarts its containers, or lacks a named container (or has not
// started it) is refused.
type crrDefaulter struct {
	pods client.Reader
}

func (d crrDefaulter) Default(ctx context.Context, crr *v1alpha1.ContainerRecreateRequest) error {
	defaults.SetDefaultsContainerRecreateRequest(crr)
	if req, err := admission.RequestFromContext(ctx); err != nil || req.Operation != admissionv1.Create || d.pods == nil {
		return nil
	}
	spec := field.NewPath("spec")
	var readOnly field.ErrorList
	for i, c := range crr.Spec.Containers {
		p := spec.Child("containers").Index(i)
		if c.PreStop != nil {
			readOnly = append(readOnly, field.Forbidden(p.Child("preStop"), "is filled from the pod's container; it may not be set"))
		}
		if c.Ports != nil {
			readOnly = append(readOnly, field.Forbidden(p.Child("ports"), "are filled from the pod's container; they may not be set"))
		}
		if c.StatusContext != nil {
			readOnly = append(readOnly, field.Forbidden(p.Child("statusContext"), "is filled from the pod's status; it may not be set"))
		}
	}
	if len(readOnly) > 0 {
		return refuse(crr, readOnly...)
	}
	pod := &corev1.Pod{}
	if err := d.pods.Get(ctx, client.ObjectKey{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return refuse(crr, field.NotFound(spec.Child("podName"), crr.Spec.PodName))
		}
		return err
	}
	switch {
	case pod.DeletionTimestamp != nil:
		return refuse(crr, field.Invalid(spec.Child("podName"), pod.Name, "the pod is terminating"))
	case pod.Spec.NodeName == "":
		return refuse(crr, field.Invalid(spec.Child("podName"), pod.Name, "the pod is not scheduled to a node yet"))
	case pod.Spec.RestartPolicy == corev1.RestartPolicyNever && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
		// An ended pod's containers are only stopped (the SidecarTerminator's request).
		return refuse(crr, field.Invalid(spec.Child("podName"), pod.Name, "the pod's restartPolicy is Never: the kubelet would not start a stopped container again"))
	}
	if crr.Labels == nil {
		crr.Labels = map[string]string{}
	}
	crr.Labels[v1alpha1.ContainerRecreateRequestPodUIDKey] = string(pod.UID)
	crr.Labels[v1alpha1.ContainerRecreateRequestNodeNameKey] = pod.Spec.NodeName
	crr.Labels[v1alpha1.ContainerRecreateRequestActiveKey] = "true"
	for i := range crr.Spec.Containers {
		c := &crr.Spec.Containers[i]
		p := spec.Child("containers").Index(i).Child("name")
		j := slices.IndexFunc(pod.Spec.Containers, func(pc corev1.Container) bool { return pc.Name == c.Name })
		if j < 0 {
			return refuse(crr, field.NotFound(p, c.Name))
		}
		pc := pod.Spec.Containers[j]
		k := slices.IndexFunc(pod.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == c.Name })
		if k < 0 || pod.Status.ContainerStatuses[k].ContainerID == "" {
			return refuse(crr, field.Invalid(p, c.Name, "the container has not been started yet"))
		}
		st := pod.Status.ContainerStatuses[k]
		c.StatusContext = &v1alpha1.ContainerRecreateRequestContainerContext{ContainerID: st.ContainerID, RestartCount: st.RestartCount}
		if pc.Lifecycle != nil && pc.Lifecycle.PreStop != nil {
			h := pc.Lifecycle.PreStop
			c.PreStop = &v1alpha1.ContainerRecreateRequestPreStop{Exec: h.Exec, TCPSocket: h.TCPSocket}
			if g := h.HTTPGet; g != nil {
				c.PreStop.HTTPGet = &v1alpha1.ContainerRecreateRequestHTTPGetAction{Path: g.Path, Port: g.Port, Host: g.Host,
					Scheme: g.Scheme, HTTPHeaders: g.HTTPHeaders}
			}
		}
		c.Ports = pc.Ports
	}
	return nil
}

func refuse(crr *v1alpha1.ContainerRecreateRequest, errs ...*field.Error) error {
	return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("ContainerRecreateRequest").GroupKind(), crr.Name, errs)
}
