package defaults

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsImagePullJobV1beta1 applies the ImagePullJob defaults to the
// storage version (oracle: apps.kruise.io_imagepulljobs.yaml):
//   - spec.completionPolicy.type: Always ("Default is Always.")
//   - spec.parallelism: 1 ("If it is unspecified, it defaults to 1.")
//   - spec.pullPolicy: created if absent ("If not specified, the system will
//     use the default values."), with timeoutSeconds 600 ("Defaults to 600")
//     and backoffLimit 3 ("Defaults to 3")
//   - spec.imagePullPolicy: IfNotPresent ("Defaults to IfNotPresent.")
func SetDefaultsImagePullJobV1beta1(obj *v1beta1.ImagePullJob) {
	setImagePullJobTemplateDefaultsV1beta1(&obj.Spec.ImagePullJobTemplate)
}

// SetDefaultsImagePullJob applies the ImagePullJob defaults to the v1alpha1
// version; same values and sources as SetDefaultsImagePullJobV1beta1:
// completionPolicy.type Always, parallelism 1, pullPolicy {timeoutSeconds
// 600, backoffLimit 3}, imagePullPolicy IfNotPresent.
func SetDefaultsImagePullJob(obj *v1alpha1.ImagePullJob) {
	setImagePullJobTemplateDefaults(&obj.Spec.ImagePullJobTemplate)
}

func setImagePullJobTemplateDefaultsV1beta1(t *v1beta1.ImagePullJobTemplate) {
	defaultString(&t.CompletionPolicy.Type, v1beta1.ImagePullJobCompletionAlways)
	defaultIntOrString(&t.Parallelism, intstr.FromInt32(1))
	if t.PullPolicy == nil {
		t.PullPolicy = &v1beta1.ImagePullJobPullPolicy{}
	}
	defaultInt32(&t.PullPolicy.TimeoutSeconds, 600)
	defaultInt32(&t.PullPolicy.BackoffLimit, 3)
	defaultString(&t.ImagePullPolicy, v1beta1.ImagePullJobPullIfNotPresent)
}

func setImagePullJobTemplateDefaults(t *v1alpha1.ImagePullJobTemplate) {
	defaultString(&t.CompletionPolicy.Type, v1alpha1.ImagePullJobCompletionAlways)
	defaultIntOrString(&t.Parallelism, intstr.FromInt32(1))
	if t.PullPolicy == nil {
		t.PullPolicy = &v1alpha1.ImagePullJobPullPolicy{}
	}
	defaultInt32(&t.PullPolicy.TimeoutSeconds, 600)
	defaultInt32(&t.PullPolicy.BackoffLimit, 3)
	defaultString(&t.ImagePullPolicy, v1alpha1.ImagePullJobPullIfNotPresent)
}
