package defaults

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsBroadcastJobV1beta1 applies the BroadcastJob defaults to the
// storage version. Sources: oracle apps.kruise.io_broadcastjobs.yaml and
// https://openkruise.io/docs/user-manuals/broadcastjob:
//   - spec.completionPolicy.type: Always ("Default is Always."; manual: "Always (default)")
//   - spec.failurePolicy.type: FailFast ("Default is FailFast"; manual: "FailFast (default)")
//   - spec.template.spec.restartPolicy: OnFailure (OpenKruise's webhook since kruise#1149: a job's
//     pods may not restart Always)
//
// spec.parallelism stays nil: the manual says that by default there is no
// limit. The pod template is left alone.
func SetDefaultsBroadcastJobV1beta1(obj *v1beta1.BroadcastJob) {
	defaultString(&obj.Spec.CompletionPolicy.Type, v1beta1.BroadcastJobCompletionPolicyAlways)
	defaultString(&obj.Spec.FailurePolicy.Type, v1beta1.BroadcastJobFailurePolicyTypeFailFast)
	defaultString(&obj.Spec.Template.Spec.RestartPolicy, corev1.RestartPolicyOnFailure)
}

// SetDefaultsBroadcastJob applies the BroadcastJob defaults to the v1alpha1
// version; same values and sources as SetDefaultsBroadcastJobV1beta1:
// completionPolicy.type Always, failurePolicy.type FailFast, template restartPolicy OnFailure.
func SetDefaultsBroadcastJob(obj *v1alpha1.BroadcastJob) {
	defaultString(&obj.Spec.CompletionPolicy.Type, v1alpha1.BroadcastJobCompletionPolicyAlways)
	defaultString(&obj.Spec.FailurePolicy.Type, v1alpha1.BroadcastJobFailurePolicyTypeFailFast)
	defaultString(&obj.Spec.Template.Spec.RestartPolicy, corev1.RestartPolicyOnFailure)
}
