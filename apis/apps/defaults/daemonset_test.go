package defaults

import (
	"testing"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func TestSetDefaultsDaemonSetV1beta1(t *testing.T) {
	userSet := &v1beta1.DaemonSet{Spec: v1beta1.DaemonSetSpec{
		BurstReplicas:        ioi(0),
		RevisionHistoryLimit: i32(0),
		UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{
			Type: v1beta1.DaemonSetRollingUpdateStrategyType,
			RollingUpdate: &v1beta1.DaemonSetRollingUpdate{
				Type:           v1beta1.DaemonSetInplaceRollingUpdateType,
				MaxUnavailable: ioi(0),
				MaxSurge:       ios("10%"),
				Partition:      ioi(5),
			},
		},
	}}
	run(t, []tcase[v1beta1.DaemonSet]{
		{
			name: "empty object gets every default",
			in:   &v1beta1.DaemonSet{},
			want: &v1beta1.DaemonSet{Spec: v1beta1.DaemonSetSpec{
				BurstReplicas:        ioi(250),
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{
					Type: v1beta1.DaemonSetRollingUpdateStrategyType,
					RollingUpdate: &v1beta1.DaemonSetRollingUpdate{
						Type:           v1beta1.DaemonSetStandardRollingUpdateType,
						MaxUnavailable: ioi(1),
						MaxSurge:       ioi(0),
						Partition:      ioi(0),
					},
				},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
		{
			name: "OnDelete gets no rollingUpdate",
			in: &v1beta1.DaemonSet{Spec: v1beta1.DaemonSetSpec{
				UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetOnDeleteStrategyType},
			}},
			want: &v1beta1.DaemonSet{Spec: v1beta1.DaemonSetSpec{
				BurstReplicas:        ioi(250),
				RevisionHistoryLimit: i32(10),
				UpdateStrategy:       v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetOnDeleteStrategyType},
			}},
		},
	}, SetDefaultsDaemonSetV1beta1, (*v1beta1.DaemonSet).DeepCopy)
}

func TestSetDefaultsDaemonSet(t *testing.T) {
	userSet := &v1alpha1.DaemonSet{Spec: v1alpha1.DaemonSetSpec{
		BurstReplicas:        ios("10%"),
		RevisionHistoryLimit: i32(0),
		UpdateStrategy: v1alpha1.DaemonSetUpdateStrategy{
			Type: v1alpha1.DaemonSetRollingUpdateStrategyType,
			RollingUpdate: &v1alpha1.DaemonSetRollingUpdate{
				Type:           v1alpha1.DaemonSetInplaceRollingUpdateType,
				MaxUnavailable: ioi(2),
				MaxSurge:       ioi(1),
				Partition:      ioi(0),
			},
		},
	}}
	run(t, []tcase[v1alpha1.DaemonSet]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.DaemonSet{},
			want: &v1alpha1.DaemonSet{Spec: v1alpha1.DaemonSetSpec{
				BurstReplicas:        ioi(250),
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1alpha1.DaemonSetUpdateStrategy{
					Type: v1alpha1.DaemonSetRollingUpdateStrategyType,
					RollingUpdate: &v1alpha1.DaemonSetRollingUpdate{
						Type:           v1alpha1.DaemonSetStandardRollingUpdateType,
						MaxUnavailable: ioi(1),
						MaxSurge:       ioi(0),
						Partition:      ioi(0),
					},
				},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsDaemonSet, (*v1alpha1.DaemonSet).DeepCopy)
}
