package statefulset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

var t0 = time.Unix(1_700_000_000, 0)

// spec is a defaulted spec of replicas with podManagementPolicy policy.
func spec(replicas int32, policy appsv1.PodManagementPolicyType, mutate ...func(*v1beta1.StatefulSetSpec)) v1beta1.StatefulSetSpec {
	set := &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{Replicas: ptr.To(replicas), PodManagementPolicy: policy,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	defaults.SetDefaultsStatefulSetV1beta1(set)
	for _, m := range mutate {
		m(&set.Spec)
	}
	return set.Spec
}

func partition(n int32) func(*v1beta1.StatefulSetSpec) {
	return func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.RollingUpdate.Partition = ptr.To(n) }
}

func maxUnavailable(v intstr.IntOrString) func(*v1beta1.StatefulSetSpec) {
	return func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.RollingUpdate.MaxUnavailable = &v }
}

func podPolicy(p v1beta1.StatefulSetPodUpdatePolicyType) func(*v1beta1.StatefulSetSpec) {
	return func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.RollingUpdate.PodUpdatePolicy = p }
}

// healthyPod is a running, ready pod of ordinal ord at rev.
func healthyPod(ord int, rev string) PodFacts {
	return PodFacts{Name: ordinal.PodName("web", ord), Ordinal: ord, Revision: rev,
		State: podcontrol.State{Phase: corev1.PodRunning, Ready: true, ReadySince: t0.Add(-time.Hour)}}
}

// snap is a snapshot of set "web" at revisions old → new, with an in-place decision from old.
func snap(s v1beta1.StatefulSetSpec, pods ...PodFacts) *Snapshot {
	return &Snapshot{Spec: s, Name: "web", CurrentRevision: "web-old", UpdateRevision: "web-new",
		InPlace: map[string]inplace.Decision{"web-old": {Spec: &inplace.UpdateSpec{Revision: "web-new",
			ContainerImages: map[string]string{"app": "app:v2"}}}}, Pods: pods}
}

// reserved is a set of single reserved ordinals.
func reserved(ords ...int) ordinal.Reserved {
	ivs := make([]ordinal.Interval, 0, len(ords))
	for _, o := range ords {
		ivs = append(ivs, ordinal.Interval{First: o, Last: o})
	}
	return ordinal.NewReserved(ivs...)
}

func names[T any](items []T, name func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func createdOrds(p Plan) []int {
	out := []int{}
	for _, c := range p.Creates {
		out = append(out, c.Ordinal)
	}
	return out
}

func deleted(p Plan) []string { return names(p.Deletes, func(d Deletion) string { return d.Pod }) }
func updated(p Plan) []string { return names(p.Updates, func(u Update) string { return u.Pod }) }
