package cloneset

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// cs builds a defaulted snapshot with revisions v1 (current) → v2 (update), in place possible.
func cs(replicas int32, mut ...func(*Snapshot)) *Snapshot {
	obj := &v1alpha1.CloneSet{}
	obj.Spec.Replicas = &replicas
	defaults.SetDefaultsCloneSet(obj)
	s := &Snapshot{Spec: obj.Spec, CurrentRevision: "v1", UpdateRevision: "v2",
		InPlace: map[string]inplace.Decision{"v1": {Spec: &inplace.UpdateSpec{Revision: "v2",
			ContainerImages: map[string]string{"app": "img:2"}}}}}
	for _, m := range mut {
		m(s)
	}
	return s
}

func ios(v string) *intstr.IntOrString {
	x := intstr.Parse(v)
	return &x
}

func partition(v string) func(*Snapshot) {
	return func(s *Snapshot) { s.Spec.UpdateStrategy.Partition = ios(v) }
}
func maxUnavailable(v string) func(*Snapshot) {
	return func(s *Snapshot) { s.Spec.UpdateStrategy.MaxUnavailable = ios(v) }
}
func maxSurge(v string) func(*Snapshot) {
	return func(s *Snapshot) { s.Spec.UpdateStrategy.MaxSurge = ios(v) }
}
func updateType(t v1alpha1.CloneSetUpdateStrategyType) func(*Snapshot) {
	return func(s *Snapshot) { s.Spec.UpdateStrategy.Type = t }
}
func paused(s *Snapshot) { s.Spec.UpdateStrategy.Paused = true }
func noInPlace(s *Snapshot) {
	s.InPlace = map[string]inplace.Decision{"v1": {RecreateReasons: []string{"spec.volumes changed"}}}
}

// pods appends n ready, running, available pods of revision rev named prefix-0..n-1.
func pods(prefix, rev string, n int, mut ...func(*PodFacts)) func(*Snapshot) {
	return func(s *Snapshot) {
		for i := 0; i < n; i++ {
			p := PodFacts{Name: fmt.Sprintf("%s-%d", prefix, i), Revision: rev, Phase: corev1.PodRunning,
				Ready: true, ReadySince: t0.Add(-time.Hour), NodeName: fmt.Sprintf("node-%s-%d", prefix, i),
				CreationTime: t0.Add(-2 * time.Hour)}
			for _, m := range mut {
				m(&p)
			}
			s.Pods = append(s.Pods, p)
		}
	}
}

func notReady(p *PodFacts)    { p.Ready, p.ReadySince = false, time.Time{} }
func specified(p *PodFacts)   { p.SpecifiedDelete = true }
func terminating(p *PodFacts) { p.Terminating = true }
func unscheduled(p *PodFacts) {
	p.NodeName, p.Phase, p.Ready, p.ReadySince = "", corev1.PodPending, false, time.Time{}
}
func onNode(n string) func(*PodFacts) { return func(p *PodFacts) { p.NodeName = n } }
func cost(c int32) func(*PodFacts)    { return func(p *PodFacts) { p.DeletionCost = c } }
func created(d time.Duration) func(*PodFacts) {
	return func(p *PodFacts) { p.CreationTime = t0.Add(d) }
}

func (p Plan) deleted() []string {
	var out []string
	for _, d := range p.Deletes {
		out = append(out, d.Pod)
	}
	return out
}

func (p Plan) updated() []string {
	var out []string
	for _, u := range p.Updates {
		out = append(out, u.Pod)
	}
	return out
}

func (p Plan) creates(rev string) int {
	n := 0
	for _, c := range p.Creates {
		if c.Revision == rev {
			n++
		}
	}
	return n
}

// testScheme knows Kubernetes' kinds and Kruise's apps/v1alpha1, for fake clients.
func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}
