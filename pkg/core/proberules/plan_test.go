package proberules

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func pod(name string, lbl map[string]string, initialized bool) *corev1.Pod {
	st := corev1.ConditionFalse
	if initialized {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Labels: lbl},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "main",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: st}}}}
}

func marker(name string, probes ...v1alpha1.PodProbeMarkerProbe) *v1alpha1.PodProbeMarker {
	return &v1alpha1.PodProbeMarker{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1alpha1.PodProbeMarkerSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "game"}}, Probes: probes}}
}

func TestNodeSpec(t *testing.T) {
	game := map[string]string{"app": "game"}
	idle := v1alpha1.PodProbeMarkerProbe{Name: "idle", ContainerName: "main", Probe: v1alpha1.PodProbeMarkerProbeSpec{
		Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	web := v1alpha1.PodProbeMarkerProbe{Name: "web", ContainerName: "main", Probe: v1alpha1.PodProbeMarkerProbeSpec{
		HTTPGet: &v1alpha1.PodProbeMarkerHTTPGetAction{Path: "/", Port: intstr.FromString("http")}}}
	badPort := v1alpha1.PodProbeMarkerProbe{Name: "tcp", ContainerName: "main", Probe: v1alpha1.PodProbeMarkerProbeSpec{
		TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("nope")}}}
	gone := marker("gone", idle)
	gone.DeletionTimestamp = &metav1.Time{}
	ending := pod("c", game, true)
	ending.DeletionTimestamp = &metav1.Time{}
	spec, problems := NodeSpec([]*corev1.Pod{pod("b", game, true), pod("a", game, true), pod("other", nil, true), pod("init", game, false), ending},
		[]*v1alpha1.PodProbeMarker{marker("m2", badPort), marker("m1", idle, web), gone})
	if len(spec.PodProbes) != 2 || spec.PodProbes[0].Name != "a" || spec.PodProbes[1].Name != "b" {
		t.Fatalf("pods %+v, want a and b (initialized, selected, not ending), in order", spec.PodProbes)
	}
	a := spec.PodProbes[0]
	if a.UID != "uid-a" || a.IP != "10.0.0.1" || len(a.Probes) != 2 || a.Probes[0].Name != "m1#idle" || a.Probes[1].Name != "m1#web" {
		t.Fatalf("pod a: %+v", a)
	}
	if p := a.Probes[1].Probe.HTTPGet.Port; p.Type != intstr.Int || p.IntVal != 8080 {
		t.Errorf("named port not resolved: %v", p)
	}
	if len(problems) != 2 || problems[0].Marker != "m2" || problems[0].Probe != "tcp" || problems[0].Namespace != "ns" {
		t.Errorf("problems %+v, want the unresolvable port of m2 on both pods", problems)
	}
	if !References(spec, "ns", "m1") || References(spec, "ns", "m2") || References(spec, "other", "m1") {
		t.Error("References")
	}
	if m, p, ok := SplitProbeName(ProbeName("m", "p")); !ok || m != "m" || p != "p" {
		t.Error("SplitProbeName")
	}
}

func TestPodMarks(t *testing.T) {
	yes, no := "true", "false"
	m := marker("m", v1alpha1.PodProbeMarkerProbe{Name: "idle", ContainerName: "main", PodConditionType: "game.io/idle",
		MarkerPolicy: []v1alpha1.PodProbeMarkerPolicy{
			{State: v1alpha1.PodProbeMarkerStateSucceeded, Labels: map[string]string{"idle": yes}, Annotations: map[string]string{"cost": "-10"}},
			{State: v1alpha1.PodProbeMarkerStateFailed, Labels: map[string]string{"idle": no}, Annotations: map[string]string{"busy": "1"}}}},
		v1alpha1.PodProbeMarkerProbe{Name: "also", ContainerName: "main", PodConditionType: "game.io/idle"})
	ts := metav1.Now().Rfc3339Copy()
	states := []v1alpha1.NodePodProbeContainerProbeState{
		{Name: "m#idle", State: v1alpha1.PodProbeMarkerStateSucceeded, Message: "ok", LastProbeTime: ts, LastTransitionTime: ts},
		{Name: "m#also", State: v1alpha1.PodProbeMarkerStateFailed},
		{Name: "gone#x", State: v1alpha1.PodProbeMarkerStateFailed},
		{Name: "m#pending"}}
	marks := PodMarks(states, map[string]*v1alpha1.PodProbeMarker{"m": m})
	if len(marks.Conditions) != 1 || marks.Conditions[0].Type != "game.io/idle" || marks.Conditions[0].Status != corev1.ConditionTrue ||
		marks.Conditions[0].Message != "ok" || !marks.Conditions[0].LastTransitionTime.Equal(&ts) {
		t.Errorf("conditions %+v: the first probe of a type wins", marks.Conditions)
	}
	if v := marks.Labels["idle"]; v == nil || *v != yes {
		t.Errorf("label idle %v", v)
	}
	if v, ok := marks.Annotations["busy"]; !ok || v != nil {
		t.Errorf("the opposite policy's annotation must be removed: %v %v", v, ok)
	}
	p := pod("a", map[string]string{"idle": no}, true)
	p.Annotations = map[string]string{"busy": "1", "cost": "-10"}
	labels, annotations := MetadataChanges(p, marks)
	if len(labels) != 1 || labels["idle"] != yes || len(annotations) != 1 || annotations["busy"] != nil {
		t.Errorf("changes: labels %v annotations %v", labels, annotations)
	}
	if got := ConditionChanges(p, marks); len(got) != 1 {
		t.Errorf("condition changes %v", got)
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: "game.io/idle", Status: corev1.ConditionTrue, Message: "ok"})
	if got := ConditionChanges(p, marks); len(got) != 0 {
		t.Errorf("an unchanged condition (a new probe time alone) is no change: %v", got)
	}
	if st := MarkerStatus(m, []*corev1.Pod{pod("a", map[string]string{"app": "game"}, true), pod("b", nil, true),
		pod("c", map[string]string{"app": "game"}, false)}); st.MatchedPods != 1 {
		t.Errorf("matched %d, want 1", st.MatchedPods)
	}
}
