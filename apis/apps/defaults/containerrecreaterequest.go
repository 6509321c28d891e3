package defaults

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// SetDefaultsContainerRecreateRequest applies the ContainerRecreateRequest
// defaults. Sources: the brief, https://openkruise.io/docs/user-manuals/containerrecreaterequest
// and oracle apps.kruise.io_containerrecreaterequests.yaml:
//   - spec.strategy: created if absent (the manual: every strategy field is
//     optional), with failurePolicy Fail (brief; the manual's example and
//     its "or 'Ignore'" alternative). orderedRecreate, forceRecreate and
//     minStartedSeconds default to false/0, their zero values ("Defaults to
//     0" for minStartedSeconds), so nothing is written for them.
//   - spec.containers[].ports[].protocol: TCP (structural default
//     `default: TCP`)
//
// activeDeadlineSeconds, ttlSecondsAfterFinished and the grace periods are
// left unset (see the package documentation).
func SetDefaultsContainerRecreateRequest(obj *v1alpha1.ContainerRecreateRequest) {
	spec := &obj.Spec
	if spec.Strategy == nil {
		spec.Strategy = &v1alpha1.ContainerRecreateRequestStrategy{}
	}
	defaultString(&spec.Strategy.FailurePolicy, v1alpha1.ContainerRecreateRequestFailurePolicyFail)
	for i := range spec.Containers {
		ports := spec.Containers[i].Ports
		for j := range ports {
			defaultString(&ports[j].Protocol, corev1.ProtocolTCP)
		}
	}
}
