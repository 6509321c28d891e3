package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func TestParseWorkload(t *testing.T) {
	for _, tc := range []struct {
		args []string
		kind *Kind
	}{
		{[]string{"clone/web"}, CloneSetKind}, {[]string{"cloneset/web"}, CloneSetKind}, {[]string{"cloneset", "web"}, CloneSetKind},
		{[]string{"clonesets.apps.kruise.io/web"}, CloneSetKind},
		{[]string{"asts/web"}, StatefulSetKind}, {[]string{"ASTS/web"}, StatefulSetKind}, {[]string{"asts", "web"}, StatefulSetKind},
		{[]string{"statefulset.apps.kruise.io/web"}, StatefulSetKind}, {[]string{"statefulsets.apps.kruise.io/web"}, StatefulSetKind},
		{[]string{"advancedstatefulset/web"}, StatefulSetKind},
	} {
		if k, name, err := ParseWorkload(tc.args); err != nil || name != "web" || k != tc.kind {
			t.Errorf("%v: %v %q, %v; want %s", tc.args, k, name, err, tc.kind.Noun)
		}
	}
	for args, why := range map[string]string{"web": "KIND/NAME", "deployment/web": "not supported yet", "clone/": "empty",
		"asts/": "empty", "sts/web": "native apps/v1 StatefulSet", "statefulset/web": "native apps/v1 StatefulSet", "statefulsets.apps/web": "not supported"} {
		if _, _, err := ParseWorkload([]string{args}); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error saying %q", args, err, why)
		}
	}
	if _, _, err := ParseWorkload(nil); err == nil {
		t.Error("no arguments: no error")
	}
}

func TestStatus(t *testing.T) {
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
		Spec:   appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](10)},
		Status: appsv1alpha1.CloneSetStatus{ObservedGeneration: 2, Replicas: 10, UpdatedReplicas: 4, UpdatedReadyReplicas: 3, AvailableReplicas: 9}}
	if msg, done, err := Status(cs); done || err != nil || !strings.Contains(msg, "4 of 10 pods updated") {
		t.Errorf("mid-rollout: %q %v %v", msg, done, err)
	}
	cs.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromString("60%"))
	cs.Status.UpdatedReadyReplicas, cs.Status.AvailableReplicas = 4, 10
	if msg, done, _ := Status(cs); !done || !strings.Contains(msg, "partition 6") {
		t.Errorf("partitioned: %q %v", msg, done)
	}
	cs.Status.Conditions = []appsv1alpha1.CloneSetCondition{{Type: "Progressing", Reason: "ProgressDeadlineExceeded", Message: "too slow"}}
	if _, _, err := Status(cs); !errors.Is(err, ErrStuck) {
		t.Errorf("stuck: %v", err)
	}
	cs.Generation = 3
	if msg, done, _ := Status(cs); done || !strings.Contains(msg, "spec update to be observed") {
		t.Errorf("unobserved: %q", msg)
	}
}

func TestUndoTarget(t *testing.T) {
	revs := []*appsv1.ControllerRevision{{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Revision: 1},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Revision: 2}, {ObjectMeta: metav1.ObjectMeta{Name: "c"}, Revision: 3}}
	if r, _ := undoTarget(revs, "c", 0); r.Name != "b" {
		t.Errorf("previous of c: %s", r.Name)
	}
	if r, _ := undoTarget(revs, "c", 1); r.Name != "a" {
		t.Errorf("--to-revision 1: %s", r.Name)
	}
	if _, err := undoTarget(revs, "c", 9); err == nil {
		t.Error("--to-revision 9: no error")
	}
}

func TestRestartBatches(t *testing.T) {
	cs := &appsv1alpha1.CloneSet{Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](5)}}
	cs.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	cs.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(1))
	got := RestartBatches(cs, []string{"e", "d", "c", "b", "a"})
	if len(got) != 2 || strings.Join(got[0], ",") != "a,b" || strings.Join(got[1], ",") != "c,d" {
		t.Errorf("batches %v, want [a b] [c d] (e kept by the partition)", got)
	}
	cs.Spec.UpdateStrategy.MaxUnavailable, cs.Spec.UpdateStrategy.Partition = nil, nil
	if got := RestartBatches(cs, []string{"a", "b", "c", "d", "e"}); len(got) != 5 {
		t.Errorf("default 20%% of 5: batches %v, want one pod at a time", got)
	}
}

func TestMigrationSteps(t *testing.T) {
	for _, tc := range []struct {
		total, step, moved int32
		want               []MigrationStep
	}{
		{5, 2, 0, []MigrationStep{{2, 3}, {4, 1}, {5, 0}}},
		{3, 5, 0, []MigrationStep{{3, 0}}},
		{4, 1, 2, []MigrationStep{{3, 1}, {4, 0}}},
		{4, 0, 0, []MigrationStep{{1, 3}, {2, 2}, {3, 1}, {4, 0}}},
		{2, 1, 2, nil},
		{0, 1, 0, nil},
	} {
		got := MigrationSteps(tc.total, tc.step, tc.moved)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("MigrationSteps(%d, %d, %d) = %v, want %v", tc.total, tc.step, tc.moved, got, tc.want)
		}
	}
}

func TestMigrationStepsUpTo(t *testing.T) {
	if got, want := MigrationStepsUpTo(5, 3, 2, 0), []MigrationStep{{2, 3}, {3, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("3 of 5, 2 a step: %v, want %v", got, want)
	}
	if got := MigrationStepsUpTo(5, 2, 1, 3); got != nil {
		t.Errorf("already past 2: %v", got)
	}
}

func TestStepSize(t *testing.T) {
	for flag, want := range map[string]int32{"2": 2, "25%": 2, "100%": 5, "1%": 1, "150%": 8} {
		if got, err := stepSize(flag, 5); err != nil || got != want {
			t.Errorf("stepSize(%q, 5) = %d, %v; want %d", flag, got, err, want)
		}
	}
	for _, flag := range []string{"0", "0%", "-1", "abc", "-10%"} {
		if _, err := stepSize(flag, 5); err == nil {
			t.Errorf("stepSize(%q) accepted", flag)
		}
	}
}
