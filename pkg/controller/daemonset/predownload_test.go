package daemonset

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/predownload"
)

// An InPlaceIfPossible update of a daemon set pre-downloads its new images onto the nodes of the
// pods not at the update revision (their controller-revision-hash); Standard, surge and OnDelete
// updates do not.
func TestPreDownloadInput(t *testing.T) {
	ds := &v1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent", UID: "u1"},
		Spec: v1beta1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}}}
	ds.Status.DesiredNumberScheduled = 5
	rev := func(image string) *appsv1.ControllerRevision {
		tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: image}}}}
		r, err := revision.New(ds, gvk, revision.Input{Template: tmpl, HashLabel: revision.DaemonHashLabel}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	old, upd := rev("agent:v1"), rev("agent:v2")
	for _, tc := range []struct {
		name string
		ru   func(*v1beta1.DaemonSetRollingUpdate)
		skip string
	}{
		{name: "in place, partition 2", ru: func(ru *v1beta1.DaemonSetRollingUpdate) {
			ru.Type, ru.Partition = v1beta1.DaemonSetInplaceRollingUpdateType, intOrStr("2")
		}},
		{name: "Standard", skip: "Standard"},
		{name: "surge", ru: func(ru *v1beta1.DaemonSetRollingUpdate) {
			ru.Type, ru.MaxSurge = v1beta1.DaemonSetInplaceRollingUpdateType, intOrStr("1")
		}, skip: "maxSurge"},
		{name: "one batch", ru: func(ru *v1beta1.DaemonSetRollingUpdate) {
			ru.Type, ru.MaxUnavailable = v1beta1.DaemonSetInplaceRollingUpdateType, intOrStr("100%")
		}, skip: "one batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snapshot(spec(tc.ru), nil)
			s.InPlace = map[string]inplace.Decision{old.Name: {Spec: &inplace.UpdateSpec{Revision: upd.Name}}}
			obs := &observation{snap: s, updateRevision: upd, current: old}
			d, err := predownload.Decide(preDownloadInput(ds, obs))
			if err != nil {
				t.Fatal(err)
			}
			if tc.skip != "" {
				if d.Label != predownload.IgnoredLabel || !strings.Contains(d.Skip, tc.skip) {
					t.Fatalf("decision %+v, want skipped for %q", d, tc.skip)
				}
				return
			}
			if d.Label != predownload.CreatedLabel || len(d.Jobs) != 1 || d.Jobs[0].Spec.Image != "agent:v2" {
				t.Fatalf("decision %+v", d)
			}
			req := d.Jobs[0].Spec.PodSelector.MatchExpressions[0]
			if req.Key != "controller-revision-hash" || req.Values[1] != revision.ShortHash(upd.Name) {
				t.Fatalf("job selects %+v", req)
			}
		})
	}
}
