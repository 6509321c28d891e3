package defaults

import (
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// SetDefaultsAdvancedCronJobV1beta1 applies the AdvancedCronJob defaults to
// the storage version. Sources: oracle apps.kruise.io_advancedcronjobs.yaml
// and the brief:
//   - spec.concurrencyPolicy: Allow (oracle: "\"Allow\" (default)")
//   - spec.paused: false (brief)
//   - spec.successfulJobsHistoryLimit: 3 (brief)
//   - spec.failedJobsHistoryLimit: 1 (brief)
//
// spec.timeZone stays nil: the oracle says an unset time zone means the time
// zone of the kruise-controller-manager process. The job templates are left
// alone (the child Job/BroadcastJob/ImageListPullJob is defaulted when it is
// created).
func SetDefaultsAdvancedCronJobV1beta1(obj *v1beta1.AdvancedCronJob) {
	spec := &obj.Spec
	defaultString(&spec.ConcurrencyPolicy, v1beta1.AdvancedCronJobAllowConcurrent)
	defaultBool(&spec.Paused, false)
	defaultInt32(&spec.SuccessfulJobsHistoryLimit, 3)
	defaultInt32(&spec.FailedJobsHistoryLimit, 1)
}

// SetDefaultsAdvancedCronJob applies the AdvancedCronJob defaults to the
// v1alpha1 version; same values and sources as
// SetDefaultsAdvancedCronJobV1beta1: concurrencyPolicy Allow, paused false,
// successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1.
func SetDefaultsAdvancedCronJob(obj *v1alpha1.AdvancedCronJob) {
	spec := &obj.Spec
	defaultString(&spec.ConcurrencyPolicy, v1alpha1.AdvancedCronJobAllowConcurrent)
	defaultBool(&spec.Paused, false)
	defaultInt32(&spec.SuccessfulJobsHistoryLimit, 3)
	defaultInt32(&spec.FailedJobsHistoryLimit, 1)
}
