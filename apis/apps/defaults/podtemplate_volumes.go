package defaults

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// SetDefaultsClaimTemplates defaults a workload's volume claim templates as
// OpenKruise does: Kubernetes' SetDefaults_PersistentVolumeClaim (an empty
// status.phase becomes Pending) and the rounding of spec.resources limits and
// requests and status.capacity to milli scale. spec.volumeMode is NOT set:
// that is SetDefaults_PersistentVolumeClaimSpec, which OpenKruise does not
// call (claims made from the templates get it from the API server).
func SetDefaultsClaimTemplates(claims []corev1.PersistentVolumeClaim) {
	for i := range claims {
		c := &claims[i]
		defaultString(&c.Status.Phase, corev1.ClaimPending)
		roundResourceList(c.Spec.Resources.Limits)
		roundResourceList(c.Spec.Resources.Requests)
		roundResourceList(c.Status.Capacity)
	}
}

// setVolumesDefaults defaults a pod template's volumes: a volume with no
// source is an emptyDir (Kubernetes' SetDefaults_Volume), then each source
// gets its own defaults.
func setVolumesDefaults(volumes []corev1.Volume) {
	for i := range volumes {
		v := &volumes[i]
		if ptr.AllPtrFieldsNil(&v.VolumeSource) {
			v.EmptyDir = &corev1.EmptyDirVolumeSource{}
		}
		setVolumeSourceDefaults(&v.VolumeSource)
	}
}

// setVolumeSourceDefaults: hostPath type "" (HostPathUnset), secret,
// configMap, downwardAPI and projected defaultMode 0644, downwardAPI items'
// fieldRef apiVersion v1, projected serviceAccountToken expirationSeconds
// 3600 (one hour).
func setVolumeSourceDefaults(s *corev1.VolumeSource) {
	if s.HostPath != nil && s.HostPath.Type == nil {
		unset := corev1.HostPathUnset
		s.HostPath.Type = &unset
	}
	if s.Secret != nil {
		defaultInt32(&s.Secret.DefaultMode, corev1.SecretVolumeSourceDefaultMode)
	}
	if s.DownwardAPI != nil {
		defaultInt32(&s.DownwardAPI.DefaultMode, corev1.DownwardAPIVolumeSourceDefaultMode)
		setDownwardAPIItemsDefaults(s.DownwardAPI.Items)
	}
	if s.ConfigMap != nil {
		defaultInt32(&s.ConfigMap.DefaultMode, corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if p := s.Projected; p != nil {
		defaultInt32(&p.DefaultMode, corev1.ProjectedVolumeSourceDefaultMode)
		for j := range p.Sources {
			src := &p.Sources[j]
			if src.DownwardAPI != nil {
				setDownwardAPIItemsDefaults(src.DownwardAPI.Items)
			}
			if t := src.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
				t.ExpirationSeconds = ptr.To[int64](3600)
			}
		}
	}
}

func setDownwardAPIItemsDefaults(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		setFieldRefDefaults(items[i].FieldRef)
	}
}
