package cli

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/daemonset"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

// The forecast of an InPlaceIfPossible daemon set over three nodes at maxUnavailable 1 updates one
// node per step, by descending name, and ends done.
func TestForecastDaemonSet(t *testing.T) {
	ds := &v1beta1.DaemonSet{}
	defaults.SetDefaultsDaemonSetV1beta1(ds)
	ds.Spec.UpdateStrategy.RollingUpdate.Type = v1beta1.DaemonSetInplaceRollingUpdateType
	ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	snap := &daemonset.Snapshot{Spec: ds.Spec, UpdateRevision: "ds-new",
		InPlace: map[string]inplace.Decision{"ds-old": {Spec: &inplace.UpdateSpec{Revision: "ds-new"}}}}
	for _, n := range []string{"a", "b", "c"} {
		snap.Nodes = append(snap.Nodes, daemonset.NodeFacts{Name: n, Verdict: nodeeligibility.Verdict{Run: true, Continue: true},
			Pods: []daemonset.PodFacts{{Name: "pod-" + n, Revision: "ds-old", Created: now,
				State: podcontrol.State{Phase: corev1.PodRunning, Ready: true, ReadySince: now.Add(-time.Hour)}}}})
	}
	steps := forecastDaemonSet(snap, now, 10)
	var got []string
	for _, st := range steps {
		for _, a := range st.actions {
			got = append(got, a.verb+" "+strings.SplitN(a.what, ":", 2)[0])
		}
	}
	if want := "in place pod-c,in place pod-b,in place pod-a"; strings.Join(got, ",") != want {
		t.Fatalf("forecast %q, want %q", strings.Join(got, ","), want)
	}
	if len(snap.Nodes[2].Pods) != 1 || snap.Nodes[2].Pods[0].Revision != "ds-old" {
		t.Fatal("the forecast modified the snapshot")
	}
}
