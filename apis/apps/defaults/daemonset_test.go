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
	defaulted := func(ru *v1beta1.DaemonSetRollingUpdate) *v1beta1.DaemonSet {
		return &v1beta1.DaemonSet{Spec: v1beta1.DaemonSetSpec{
			BurstReplicas:        ioi(250),
			RevisionHistoryLimit: i32(10),
			UpdateStrategy:       v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetRollingUpdateStrategyType, RollingUpdate: ru},
		}}
	}
	withRolling := func(ru *v1beta1.DaemonSetRollingUpdate) *v1beta1.DaemonSet {
		return &v1beta1.DaemonSet{Spec: v1beta1.DaemonSetSpec{UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{RollingUpdate: ru}}}
	}
	run(t, []tcase[v1beta1.DaemonSet]{
		{
			name: "empty object gets every default, partition left unset",
			in:   &v1beta1.DaemonSet{},
			want: defaulted(&v1beta1.DaemonSetRollingUpdate{Type: v1beta1.DaemonSetStandardRollingUpdateType,
				MaxUnavailable: ioi(1), MaxSurge: ioi(0)}),
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
		{
			name: "maxSurge alone is a surge update: maxUnavailable stays unset",
			in:   withRolling(&v1beta1.DaemonSetRollingUpdate{MaxSurge: ioi(2)}),
			want: defaulted(&v1beta1.DaemonSetRollingUpdate{Type: v1beta1.DaemonSetStandardRollingUpdateType, MaxSurge: ioi(2)}),
		},
		{
			name: "maxUnavailable alone: maxSurge stays unset (as OpenKruise stores it)",
			in:   withRolling(&v1beta1.DaemonSetRollingUpdate{MaxUnavailable: ioi(1), Partition: ioi(2)}),
			want: defaulted(&v1beta1.DaemonSetRollingUpdate{Type: v1beta1.DaemonSetStandardRollingUpdateType,
				MaxUnavailable: ioi(1), Partition: ioi(2)}),
		},
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
	defaulted := func(ru *v1alpha1.DaemonSetRollingUpdate) *v1alpha1.DaemonSet {
		return &v1alpha1.DaemonSet{Spec: v1alpha1.DaemonSetSpec{
			BurstReplicas:        ioi(250),
			RevisionHistoryLimit: i32(10),
			UpdateStrategy:       v1alpha1.DaemonSetUpdateStrategy{Type: v1alpha1.DaemonSetRollingUpdateStrategyType, RollingUpdate: ru},
		}}
	}
	withRolling := func(ru *v1alpha1.DaemonSetRollingUpdate) *v1alpha1.DaemonSet {
		return &v1alpha1.DaemonSet{Spec: v1alpha1.DaemonSetSpec{UpdateStrategy: v1alpha1.DaemonSetUpdateStrategy{RollingUpdate: ru}}}
	}
	standard := v1alpha1.DaemonSetStandardRollingUpdateType
	run(t, []tcase[v1alpha1.DaemonSet]{
		{
			name: "empty object gets every default, partition left unset",
			in:   &v1alpha1.DaemonSet{},
			want: defaulted(&v1alpha1.DaemonSetRollingUpdate{Type: standard, MaxUnavailable: ioi(1), MaxSurge: ioi(0)}),
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
		{
			name: "Surging becomes Standard with maxSurge 1 and maxUnavailable 0",
			in:   withRolling(&v1alpha1.DaemonSetRollingUpdate{Type: v1alpha1.DaemonSetSurgingRollingUpdateType}),
			want: defaulted(&v1alpha1.DaemonSetRollingUpdate{Type: standard, MaxUnavailable: ioi(0), MaxSurge: ioi(1)}),
		},
		{
			name: "Surging keeps a set maxSurge",
			in:   withRolling(&v1alpha1.DaemonSetRollingUpdate{Type: v1alpha1.DaemonSetSurgingRollingUpdateType, MaxSurge: ios("20%")}),
			want: defaulted(&v1alpha1.DaemonSetRollingUpdate{Type: standard, MaxUnavailable: ioi(0), MaxSurge: ios("20%")}),
		},
		{
			name: "maxSurge alone is a surge update: maxUnavailable stays unset",
			in:   withRolling(&v1alpha1.DaemonSetRollingUpdate{MaxSurge: ioi(2)}),
			want: defaulted(&v1alpha1.DaemonSetRollingUpdate{Type: standard, MaxSurge: ioi(2)}),
		},
	}, SetDefaultsDaemonSet, (*v1alpha1.DaemonSet).DeepCopy)
}
