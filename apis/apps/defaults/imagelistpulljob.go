package defaults

import (
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsImageListPullJobV1beta1 applies the ImageListPullJob defaults to
// the storage version (oracle: apps.kruise.io_imagelistpulljobs.yaml, whose
// descriptions match ImagePullJob's):
//   - spec.completionPolicy.type: Always ("Default is Always.")
//   - spec.parallelism: 1 ("If it is unspecified, it defaults to 1.")
//   - spec.pullPolicy: created if absent, timeoutSeconds 600 ("Defaults to
//     600"), backoffLimit 3 ("Defaults to 3")
//   - spec.imagePullPolicy: IfNotPresent ("Defaults to IfNotPresent.")
func SetDefaultsImageListPullJobV1beta1(obj *v1beta1.ImageListPullJob) {
	setImagePullJobTemplateDefaultsV1beta1(&obj.Spec.ImagePullJobTemplate)
}

// SetDefaultsImageListPullJob applies the ImageListPullJob defaults to the
// v1alpha1 version; same values and sources as
// SetDefaultsImageListPullJobV1beta1.
func SetDefaultsImageListPullJob(obj *v1alpha1.ImageListPullJob) {
	setImagePullJobTemplateDefaults(&obj.Spec.ImagePullJobTemplate)
}
