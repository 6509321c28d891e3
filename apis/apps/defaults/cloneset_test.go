package defaults

import (
	"testing"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func TestSetDefaultsCloneSet(t *testing.T) {
	userSet := &v1alpha1.CloneSet{Spec: v1alpha1.CloneSetSpec{
		Replicas:             i32(0),
		RevisionHistoryLimit: i32(0),
		UpdateStrategy: v1alpha1.CloneSetUpdateStrategy{
			Type:           v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
			Partition:      ios("50%"),
			MaxUnavailable: ioi(0),
			MaxSurge:       ios("10%"),
			// OpenKruise stores {} for the in-place types; a user's value is kept.
			InPlaceUpdateStrategy: &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 0},
		},
	}}
	inPlace := &v1alpha1.CloneSet{Spec: v1alpha1.CloneSetSpec{UpdateStrategy: v1alpha1.CloneSetUpdateStrategy{
		Type: v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType}}}
	run(t, []tcase[v1alpha1.CloneSet]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.CloneSet{},
			want: &v1alpha1.CloneSet{Spec: v1alpha1.CloneSetSpec{
				Replicas:             i32(1),
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1alpha1.CloneSetUpdateStrategy{
					Type:           v1alpha1.RecreateCloneSetUpdateStrategyType,
					Partition:      ioi(0),
					MaxUnavailable: ios("20%"),
					MaxSurge:       ioi(0),
				},
			}},
		},
		{name: "user-set values (including explicit zeros) kept", in: userSet, want: userSet.DeepCopy()},
		{name: "in-place types get an empty inPlaceUpdateStrategy", in: inPlace, want: &v1alpha1.CloneSet{Spec: v1alpha1.CloneSetSpec{
			Replicas: i32(1), RevisionHistoryLimit: i32(10),
			UpdateStrategy: v1alpha1.CloneSetUpdateStrategy{Type: v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType, Partition: ioi(0),
				MaxUnavailable: ios("20%"), MaxSurge: ioi(0), InPlaceUpdateStrategy: &appspub.InPlaceUpdateStrategy{}},
		}}},
	}, SetDefaultsCloneSet, (*v1alpha1.CloneSet).DeepCopy)
}
