package defaults

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// retainRetain is the PVC retention policy every v1beta1 StatefulSet gets when it gives none.
func retainRetain() *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	return &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
}

func TestSetDefaultsStatefulSetV1beta1(t *testing.T) {
	userSet := &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
		Replicas:             i32(0),
		PodManagementPolicy:  appsv1.ParallelPodManagement,
		RevisionHistoryLimit: i32(0),
		UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{
			Type: appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{
				Partition:       i32(0),
				MaxUnavailable:  ios("50%"),
				PodUpdatePolicy: v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy,
				MinReadySeconds: i32(5),
			},
		},
		PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		},
		VolumeClaimUpdateStrategy: v1beta1.StatefulSetVolumeClaimUpdateStrategy{
			Type: v1beta1.OnPodRollingUpdateStatefulSetVolumeClaimUpdateStrategy,
		},
	}}
	rollingDefaults := v1beta1.StatefulSetUpdateStrategy{
		Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{
			Partition:       i32(0),
			MaxUnavailable:  ioi(1),
			PodUpdatePolicy: v1beta1.RecreateStatefulSetPodUpdatePolicy,
			MinReadySeconds: i32(0),
		},
	}
	run(t, []tcase[v1beta1.StatefulSet]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.StatefulSet{},
			want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:                             i32(1),
				PodManagementPolicy:                  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit:                 i32(10),
				UpdateStrategy:                       rollingDefaults,
				PersistentVolumeClaimRetentionPolicy: retainRetain(),
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
		{
			name: "partial rollingUpdate completed",
			in: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{
					Partition: i32(1), PodUpdatePolicy: v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy}},
			}},
			want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:             i32(1),
				PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{
					Type: appsv1.RollingUpdateStatefulSetStrategyType,
					RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{
						Partition:       i32(1),
						MaxUnavailable:  ioi(1),
						PodUpdatePolicy: v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy,
						MinReadySeconds: i32(0),
					},
				},
				PersistentVolumeClaimRetentionPolicy: retainRetain(),
			}},
		},
		{
			name: "OnDelete gets no rollingUpdate",
			in: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			}},
			want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:                             i32(1),
				PodManagementPolicy:                  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit:                 i32(10),
				UpdateStrategy:                       v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
				PersistentVolumeClaimRetentionPolicy: retainRetain(),
			}},
		},
		{
			name: "half-given PVC retention policy completed with Retain",
			in: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas: i32(3),
				PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
					WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				},
			}},
			want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:             i32(3),
				PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit: i32(10),
				UpdateStrategy:       rollingDefaults,
				PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
					WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
					WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				},
			}},
		},
	}, SetDefaultsStatefulSetV1beta1, (*v1beta1.StatefulSet).DeepCopy)
}

func TestSetDefaultsStatefulSet(t *testing.T) {
	userSet := &v1alpha1.StatefulSet{Spec: v1alpha1.StatefulSetSpec{
		Replicas:             i32(0),
		PodManagementPolicy:  appsv1.ParallelPodManagement,
		RevisionHistoryLimit: i32(0),
		UpdateStrategy: v1alpha1.StatefulSetUpdateStrategy{
			Type: appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &v1alpha1.StatefulSetRollingUpdateStrategy{
				Partition:       i32(2),
				MaxUnavailable:  ioi(3),
				PodUpdatePolicy: v1alpha1.InPlaceOnlyStatefulSetPodUpdatePolicy,
				MinReadySeconds: i32(7),
			},
		},
	}}
	run(t, []tcase[v1alpha1.StatefulSet]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.StatefulSet{},
			want: &v1alpha1.StatefulSet{Spec: v1alpha1.StatefulSetSpec{
				Replicas:             i32(1),
				PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1alpha1.StatefulSetUpdateStrategy{
					Type: appsv1.RollingUpdateStatefulSetStrategyType,
					RollingUpdate: &v1alpha1.StatefulSetRollingUpdateStrategy{
						Partition:       i32(0),
						MaxUnavailable:  ioi(1),
						PodUpdatePolicy: v1alpha1.RecreateStatefulSetPodUpdatePolicy,
						MinReadySeconds: i32(0),
					},
				},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
		{
			name: "OnDelete gets no rollingUpdate",
			in: &v1alpha1.StatefulSet{Spec: v1alpha1.StatefulSetSpec{
				UpdateStrategy: v1alpha1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			}},
			want: &v1alpha1.StatefulSet{Spec: v1alpha1.StatefulSetSpec{
				Replicas:             i32(1),
				PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit: i32(10),
				UpdateStrategy:       v1alpha1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			}},
		},
	}, SetDefaultsStatefulSet, (*v1alpha1.StatefulSet).DeepCopy)
}

// OpenKruise defaults a v1alpha1 StatefulSet by converting it to v1beta1, defaulting that and
// converting back, which loses the v1beta1-only fields (its conversion has no stash). The v1alpha1
// defaults are that, field for field.
func TestSetDefaultsStatefulSetIsV1beta1ThroughConversion(t *testing.T) {
	withTemplate := func(s v1alpha1.StatefulSetSpec) *v1alpha1.StatefulSet {
		s.Template = corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
		s.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{}}
		return &v1alpha1.StatefulSet{Spec: s}
	}
	for name, in := range map[string]*v1alpha1.StatefulSet{
		"empty":    {},
		"template": withTemplate(v1alpha1.StatefulSetSpec{}),
		"OnDelete": withTemplate(v1alpha1.StatefulSetSpec{UpdateStrategy: v1alpha1.StatefulSetUpdateStrategy{
			Type: appsv1.OnDeleteStatefulSetStrategyType}}),
		"partial rollingUpdate": withTemplate(v1alpha1.StatefulSetSpec{UpdateStrategy: v1alpha1.StatefulSetUpdateStrategy{
			RollingUpdate: &v1alpha1.StatefulSetRollingUpdateStrategy{MaxUnavailable: ios("10%"), Paused: true}}}),
	} {
		t.Run(name, func(t *testing.T) {
			got := in.DeepCopy()
			SetDefaultsStatefulSet(got)
			SetDefaultsStatefulSetTemplate(got)

			hub := &v1beta1.StatefulSet{}
			if err := in.DeepCopy().ConvertTo(hub); err != nil {
				t.Fatal(err)
			}
			SetDefaultsStatefulSetV1beta1(hub)
			SetDefaultsStatefulSetTemplateV1beta1(hub)
			want := &v1alpha1.StatefulSet{}
			if err := want.ConvertFrom(hub); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Spec, want.Spec) {
				t.Errorf("v1alpha1 defaults differ from v1beta1's through conversion\n got: %s\nwant: %s", js(got.Spec), js(want.Spec))
			}
		})
	}
}

func TestSetDefaultsStatefulSetTemplate(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}
	defaulted := corev1.PodTemplateSpec{Spec: *podLevel(corev1.PodSpec{Containers: []corev1.Container{ctr("app", "app:v1", corev1.PullAlways)}})}
	claims := []corev1.PersistentVolumeClaim{{}}
	defaultedClaims := []corev1.PersistentVolumeClaim{{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}}
	// Only the templates: the StatefulSet's own fields are SetDefaultsStatefulSet[V1beta1]'s.
	run(t, []tcase[v1beta1.StatefulSet]{{name: "v1beta1",
		in:   &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{Template: tmpl, VolumeClaimTemplates: claims}},
		want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{Template: defaulted, VolumeClaimTemplates: defaultedClaims}},
	}}, SetDefaultsStatefulSetTemplateV1beta1, (*v1beta1.StatefulSet).DeepCopy)
	run(t, []tcase[v1alpha1.StatefulSet]{{name: "v1alpha1",
		in:   &v1alpha1.StatefulSet{Spec: v1alpha1.StatefulSetSpec{Template: tmpl, VolumeClaimTemplates: claims}},
		want: &v1alpha1.StatefulSet{Spec: v1alpha1.StatefulSetSpec{Template: defaulted, VolumeClaimTemplates: defaultedClaims}},
	}}, SetDefaultsStatefulSetTemplate, (*v1alpha1.StatefulSet).DeepCopy)
}
