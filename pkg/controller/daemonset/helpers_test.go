package daemonset

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/nodeeligibility"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

const (
	revOld = "ds-old"
	revNew = "ds-new"
)

// spec returns a defaulted spec with the rolling update set by mutate.
func spec(mutate func(ru *v1beta1.DaemonSetRollingUpdate)) v1beta1.DaemonSetSpec {
	ds := &v1beta1.DaemonSet{}
	defaults.SetDefaultsDaemonSetV1beta1(ds)
	if mutate != nil {
		mutate(ds.Spec.UpdateStrategy.RollingUpdate)
	}
	return ds.Spec
}

func intOrStr(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }

// readyPod is an available pod of rev on node created at t0.
func readyPod(node, rev string) PodFacts {
	return PodFacts{Name: "p-" + node + "-" + rev, Revision: rev, Created: t0,
		State: podcontrol.State{Phase: "Running", Ready: true, ReadySince: t0.Add(-time.Hour)}}
}

// nodes returns n eligible nodes named n0..n{n-1}, each with one ready pod of rev ("" for none).
func nodes(n int, rev string) []NodeFacts {
	out := make([]NodeFacts, n)
	for i := range out {
		out[i] = NodeFacts{Name: fmt.Sprintf("n%d", i), Verdict: nodeeligibility.Verdict{Run: true, Continue: true}}
		if rev != "" {
			out[i].Pods = []PodFacts{readyPod(out[i].Name, rev)}
		}
	}
	return out
}

// snapshot builds a snapshot with old → new updatable in place.
func snapshot(s v1beta1.DaemonSetSpec, ns []NodeFacts) *Snapshot {
	return &Snapshot{Spec: s, UpdateRevision: revNew, Nodes: ns,
		InPlace: map[string]inplace.Decision{revOld: {Spec: &inplace.UpdateSpec{Revision: revNew}}}}
}
