package defaults

import (
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsNodeImageV1beta1 applies the NodeImage defaults to the storage
// version (oracle: apps.kruise.io_nodeimages.yaml), for every tag of every
// image in spec.images:
//   - pullPolicy: created if absent ("If not specified, the system will use
//     the default values."), timeoutSeconds 600 ("Defaults to 600"),
//     backoffLimit 3 ("Defaults to 3")
//   - imagePullPolicy: IfNotPresent ("Defaults to IfNotPresent.")
func SetDefaultsNodeImageV1beta1(obj *v1beta1.NodeImage) {
	for name, img := range obj.Spec.Images {
		for i := range img.Tags {
			tag := &img.Tags[i]
			if tag.PullPolicy == nil {
				tag.PullPolicy = &v1beta1.NodeImageTagPullPolicy{}
			}
			defaultInt32(&tag.PullPolicy.TimeoutSeconds, 600)
			defaultInt32(&tag.PullPolicy.BackoffLimit, 3)
			defaultString(&tag.ImagePullPolicy, v1beta1.ImagePullJobPullIfNotPresent)
		}
		obj.Spec.Images[name] = img
	}
}

// SetDefaultsNodeImage applies the NodeImage defaults to the v1alpha1
// version; same values and sources as SetDefaultsNodeImageV1beta1.
func SetDefaultsNodeImage(obj *v1alpha1.NodeImage) {
	for name, img := range obj.Spec.Images {
		for i := range img.Tags {
			tag := &img.Tags[i]
			if tag.PullPolicy == nil {
				tag.PullPolicy = &v1alpha1.NodeImageTagPullPolicy{}
			}
			defaultInt32(&tag.PullPolicy.TimeoutSeconds, 600)
			defaultInt32(&tag.PullPolicy.BackoffLimit, 3)
			defaultString(&tag.ImagePullPolicy, v1alpha1.ImagePullJobPullIfNotPresent)
		}
		obj.Spec.Images[name] = img
	}
}
