package cloneset

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
)

// The CloneSet's reading of OpenKruise's skip rules (pkg/machinery/predownload): ReCreate rules
// pre-download out; partition and maxUnavailable count as the planner bounds them (percentages
// of replicas rounded up, maxUnavailable at least one); the current revision's in-place decision.
func TestPreDownloadSkipRules(t *testing.T) {
	owner := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u"},
		Spec: v1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	revs := map[string]*appsv1.ControllerRevision{}
	for name, image := range map[string]string{"v1": "app:v1", "v2": "app:v2"} {
		tpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
		rev, err := revision.New(owner, gvk, revision.Input{Template: tpl, RecordClaimTemplates: true}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		rev.Name = name
		revs[name] = rev
	}
	inPlace := updateType(v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	for _, tc := range []struct {
		name    string
		snap    *Snapshot
		skipped bool
	}{
		{"in place, 5 pods, 20%", cs(5, inPlace, partition("0"), maxUnavailable("20%")), false},
		{"ReCreate", cs(5, updateType(v1alpha1.RecreateCloneSetUpdateStrategyType), partition("0"), maxUnavailable("20%")), true},
		{"3 replicas", cs(3, inPlace, partition("0"), maxUnavailable("20%")), true},
		{"one batch", cs(5, inPlace, partition("0"), maxUnavailable("100%")), true},
		{"one batch, but a partition", cs(5, inPlace, partition("1"), maxUnavailable("100%")), false},
		{"one batch, but a partition of 10% (one pod)", cs(5, inPlace, partition("10%"), maxUnavailable("100%")), false},
		{"not in place", cs(5, inPlace, partition("0"), maxUnavailable("20%"), noInPlace), true},
	} {
		obs := &observation{snap: tc.snap, revisions: revs, updateRevision: revs["v2"]}
		d, err := predownload.Decide(preDownloadInput(owner, obs))
		if err != nil {
			t.Fatal(err)
		}
		if (d.Label == predownload.IgnoredLabel) != tc.skipped || (d.Label == predownload.CreatedLabel) == tc.skipped {
			t.Errorf("%s: decision %+v, want skipped %v", tc.name, d, tc.skipped)
		}
		if !tc.skipped && (len(d.Jobs) != 1 || d.Jobs[0].Name != "v2-app" || metav1.GetControllerOf(d.Jobs[0]).Kind != "CloneSet") {
			t.Errorf("%s: jobs %+v, want v2-app owned by the CloneSet", tc.name, d.Jobs)
		}
	}
}
