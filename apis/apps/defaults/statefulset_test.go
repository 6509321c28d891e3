package defaults

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

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
			},
		},
		PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		},
	}}
	run(t, []tcase[v1beta1.StatefulSet]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.StatefulSet{},
			want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:             i32(1),
				PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{
					Type: appsv1.RollingUpdateStatefulSetStrategyType,
					RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{
						Partition:       i32(0),
						MaxUnavailable:  ioi(1),
						PodUpdatePolicy: v1beta1.RecreateStatefulSetPodUpdatePolicy,
					},
				},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
		{
			name: "OnDelete gets no rollingUpdate",
			in: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			}},
			want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:             i32(1),
				PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit: i32(10),
				UpdateStrategy:       v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			}},
		},
		{
			name: "empty PVC retention policy filled with Retain",
			in: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:                             i32(3),
				PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{},
			}},
			want: &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{
				Replicas:             i32(3),
				PodManagementPolicy:  appsv1.OrderedReadyPodManagement,
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{
					Type: appsv1.RollingUpdateStatefulSetStrategyType,
					RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{
						Partition:       i32(0),
						MaxUnavailable:  ioi(1),
						PodUpdatePolicy: v1beta1.RecreateStatefulSetPodUpdatePolicy,
					},
				},
				PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
					WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
					WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
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
					},
				},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsStatefulSet, (*v1alpha1.StatefulSet).DeepCopy)
}
