package podmutation

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

// LaunchPriorityPath and LaunchPriorityWebhookName are the pod webhook's second entry: it gives the
// pods that ask for a container launch order their barrier env (InjectLaunchBarrier), whatever
// their owner. The API server calls it only for such pods (LaunchPriorityMatch).
const (
	LaunchPriorityPath        = "/mutate-launchpriority-pod"
	LaunchPriorityWebhookName = "mpodlaunchpriority.kruise.io"
)

// +kubebuilder:webhook:path=/mutate-launchpriority-pod,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups="",resources=pods,verbs=create,versions=v1,name=mpodlaunchpriority.kruise.io,admissionReviewVersions=v1,timeoutSeconds=10,reinvocationPolicy=IfNeeded

// LaunchPriorityMatch is the CEL condition under which the API server calls the entry: a pod of
// several containers that is Ordered or sets KRUISE_CONTAINER_PRIORITY on some container. The
// entry is reinvoked when a later webhook (SidecarSet injection) adds containers.
const LaunchPriorityMatch = `size(object.spec.containers) > 1 && (` +
	`(has(object.metadata.annotations) && '` + appspub.ContainerLaunchPriorityKey + `' in object.metadata.annotations && ` +
	`object.metadata.annotations['` + appspub.ContainerLaunchPriorityKey + `'] == '` + appspub.ContainerLaunchOrdered + `') || ` +
	`object.spec.containers.exists(c, has(c.env) && c.env.exists(e, e.name == '` + appspub.ContainerLaunchPriorityEnvName + `')))`

// scopeLaunchPriority calls the entry for every pod that asks for an order, outside the excluded
// namespaces.
func scopeLaunchPriority(w *admissionregistrationv1.MutatingWebhook) {
	w.ObjectSelector = nil
	w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "asks-for-launch-priority", Expression: LaunchPriorityMatch}}
	again := admissionregistrationv1.IfNeededReinvocationPolicy
	w.ReinvocationPolicy = &again
}

// handleLaunchPriority answers the entry's calls: the pod with its barrier env, or refused when a
// priority is not an integer.
func (h *Handler) handleLaunchPriority(_ context.Context, req admission.Request) admission.Response {
	pod := &corev1.Pod{}
	if err := h.Decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	changed, err := InjectLaunchBarrier(pod)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if !changed {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// LaunchPriorities are the launch priorities of the pod's containers (inplace.ContainerPriority),
// in spec order, when the pod asks for an order as OpenKruise reads it: Ordered with several
// containers, or KRUISE_CONTAINER_PRIORITY values that are not all equal (unset is 0). Nil
// otherwise. With Ordered the env values are not read; without, one that is not an integer is an
// error naming its field.
func LaunchPriorities(pod *corev1.Pod) ([]int, error) {
	if len(pod.Spec.Containers) < 2 {
		return nil, nil
	}
	out := make([]int, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		out[i] = inplace.ContainerPriority(pod, c.Name)
	}
	if pod.Annotations[appspub.ContainerLaunchPriorityKey] == appspub.ContainerLaunchOrdered {
		return out, nil
	}
	containers := field.NewPath("spec", "containers")
	for i, c := range pod.Spec.Containers {
		for j, e := range c.Env {
			if e.Name != appspub.ContainerLaunchPriorityEnvName {
				continue
			}
			if _, err := strconv.Atoi(e.Value); err != nil {
				return nil, field.Invalid(containers.Index(i).Child("env").Index(j).Child("value"), e.Value,
					appspub.ContainerLaunchPriorityEnvName+" must be an integer (a literal value, not valueFrom)")
			}
		}
	}
	for _, p := range out[1:] {
		if p != out[0] {
			return out, nil
		}
	}
	return nil, nil // one priority for all: no order to keep
}

// InjectLaunchBarrier gives each container of a pod that asks for a launch order (LaunchPriorities)
// the env KRUISE_CONTAINER_BARRIER, read from key p_<priority> of ConfigMap <pod name>-barrier,
// replacing one already there; a pod with only generateName is named here, so that the barrier's
// name is known. It reports whether it changed the pod.
func InjectLaunchBarrier(pod *corev1.Pod) (bool, error) {
	prios, err := LaunchPriorities(pod)
	if err != nil || prios == nil {
		return false, err
	}
	if pod.Name == "" && pod.GenerateName != "" {
		pod.Name = generateName(pod.GenerateName)
	}
	changed := false
	for i := range pod.Spec.Containers {
		want := BarrierEnv(pod.Name, prios[i])
		c := &pod.Spec.Containers[i]
		j := -1
		for k := range c.Env {
			if c.Env[k].Name == appspub.ContainerLaunchBarrierEnvName {
				j = k
			}
		}
		switch {
		case j < 0:
			c.Env = append(c.Env, want)
		case c.Env[j].ValueFrom == nil || c.Env[j].ValueFrom.ConfigMapKeyRef == nil || c.Env[j].Value != "" ||
			*c.Env[j].ValueFrom.ConfigMapKeyRef != *want.ValueFrom.ConfigMapKeyRef:
			c.Env[j] = want
		default:
			continue
		}
		changed = true
	}
	return changed, nil
}

// BarrierEnv is the env that holds a container of priority prio back until its key is released.
func BarrierEnv(podName string, prio int) corev1.EnvVar {
	return corev1.EnvVar{Name: appspub.ContainerLaunchBarrierEnvName, ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: podName + appspub.BarrierConfigMapSuffix},
			Key:                  BarrierKey(prio)}}}
}

// BarrierKey is the barrier's key that releases the containers of priority prio.
func BarrierKey(prio int) string { return appspub.BarrierKeyPrefix + strconv.Itoa(prio) }

// generateName names a pod as the API server would from its generateName (base, cut to leave room,
// and five random characters).
func generateName(base string) string {
	const maxBase = 63 - 5
	if len(base) > maxBase {
		base = base[:maxBase]
	}
	return base + rand.String(5)
}
