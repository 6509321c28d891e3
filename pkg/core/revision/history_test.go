package revision

import (
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestToDelete(t *testing.T) {
	at := func(name string, number int64, minute int) *appsv1.ControllerRevision {
		r := rawRevision(name, number, "{}")
		r.CreationTimestamp = metav1.NewTime(time.Date(2025, 1, 1, 0, minute, 0, 0, time.UTC))
		return r
	}
	// r1..r5 in shuffled order, r5 the newest.
	history := []*appsv1.ControllerRevision{at("r3", 3, 3), at("r1", 1, 1), at("r5", 5, 5), at("r2", 2, 2), at("r4", 4, 4)}
	tests := []struct {
		name      string
		revisions []*appsv1.ControllerRevision
		inUse     map[string]bool
		limit     int32
		want      []string
	}{
		{name: "within the limit", revisions: history, limit: 5, want: []string{}},
		{name: "oldest beyond the limit, oldest first", revisions: history, limit: 2, want: []string{"r1", "r2", "r3"}},
		{name: "revisions in use are kept and do not count", revisions: history,
			inUse: map[string]bool{"r1": true, "r5": true}, limit: 1, want: []string{"r2", "r3"}},
		{name: "limit 0 prunes every unused revision", revisions: history,
			inUse: map[string]bool{"r4": true}, limit: 0, want: []string{"r1", "r2", "r3", "r5"}},
		{name: "negative limit counts as 0", revisions: history,
			inUse: map[string]bool{"r1": true, "r2": true, "r3": true, "r4": true}, limit: -3, want: []string{"r5"}},
		{name: "everything in use", revisions: history,
			inUse: map[string]bool{"r1": true, "r2": true, "r3": true, "r4": true, "r5": true}, want: []string{}},
		{name: "equal numbers: older creation first, then name",
			revisions: []*appsv1.ControllerRevision{at("b", 1, 2), at("z", 1, 1), at("a", 1, 2), at("c", 2, 0)},
			limit:     1, want: []string{"z", "a", "b"}},
		{name: "nil entries are skipped", revisions: []*appsv1.ControllerRevision{nil, at("r1", 1, 1), nil},
			want: []string{"r1"}},
		{name: "no revisions", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]*appsv1.ControllerRevision(nil), tt.revisions...)
			got := names(ToDelete(tt.revisions, tt.inUse, tt.limit))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ToDelete = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(tt.revisions, before) {
				t.Error("ToDelete reordered its input")
			}
		})
	}
}
