package validating

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func validMarker() *v1alpha1.PodProbeMarker {
	return &v1alpha1.PodProbeMarker{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"},
		Spec: v1alpha1.PodProbeMarkerSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "game"}},
			Probes: []v1alpha1.PodProbeMarkerProbe{{Name: "idle", ContainerName: "main", PodConditionType: "game.io/idle",
				Probe:        v1alpha1.PodProbeMarkerProbeSpec{Exec: &corev1.ExecAction{Command: []string{"true"}}},
				MarkerPolicy: []v1alpha1.PodProbeMarkerPolicy{{State: v1alpha1.PodProbeMarkerStateSucceeded, Labels: map[string]string{"idle": "true"}}}}}}}
}

func TestValidatePodProbeMarker(t *testing.T) {
	if errs := ValidatePodProbeMarker(validMarker()); len(errs) != 0 {
		t.Fatalf("valid marker refused: %v", errs)
	}
	for name, tc := range map[string]struct {
		mutate func(*v1alpha1.PodProbeMarker)
		want   string
	}{
		"no selector":      {func(m *v1alpha1.PodProbeMarker) { m.Spec.Selector = nil }, "spec.selector: Required"},
		"empty selector":   {func(m *v1alpha1.PodProbeMarker) { m.Spec.Selector = &metav1.LabelSelector{} }, "spec.selector: Required"},
		"no probes":        {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes = nil }, "spec.probes: Required"},
		"hash in name":     {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].Name = "a#b" }, "spec.probes[0].name"},
		"native condition": {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].Name = "Ready" }, "pod condition of Kubernetes' own"},
		"duplicate name":   {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes = append(m.Spec.Probes, m.Spec.Probes[0]) }, "spec.probes[1].name: Duplicate"},
		"no container":     {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].ContainerName = "" }, "spec.probes[0].containerName"},
		"no handler":       {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].Probe.Exec = nil }, "spec.probes[0].probe: Required"},
		"grpc": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].Probe.GRPC = &v1alpha1.PodProbeMarkerGRPCAction{Port: 1}
		}, "spec.probes[0].probe.grpc: Forbidden"},
		"two handlers": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].Probe.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}
		}, "only one of"},
		"bad port":      {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].Probe = tcp(intstr.FromInt32(70000)) }, "spec.probes[0].probe.tcpSocket.port"},
		"bad port name": {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].Probe = tcp(intstr.FromString("Not_A_Name")) }, "spec.probes[0].probe.tcpSocket.port"},
		"http without path": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].Probe = v1alpha1.PodProbeMarkerProbeSpec{HTTPGet: &v1alpha1.PodProbeMarkerHTTPGetAction{Port: intstr.FromInt32(80), Scheme: "HTTP"}}
		}, "spec.probes[0].probe.httpGet.path"},
		"negative period": {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].Probe.PeriodSeconds = -1 }, "spec.probes[0].probe.periodSeconds"},
		"nothing marked": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].PodConditionType, m.Spec.Probes[0].MarkerPolicy = "", nil
		}, "set podConditionType or markerPolicy"},
		"bad condition": {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].PodConditionType = "not valid!" }, "spec.probes[0].podConditionType"},
		"bad state":     {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].MarkerPolicy[0].State = "True" }, "spec.probes[0].markerPolicy[0].state: Unsupported"},
		"empty policy":  {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].MarkerPolicy[0].Labels = nil }, "spec.probes[0].markerPolicy[0]: Required"},
		"http host": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].Probe = v1alpha1.PodProbeMarkerProbeSpec{HTTPGet: &v1alpha1.PodProbeMarkerHTTPGetAction{Path: "/", Port: intstr.FromInt32(80),
				Scheme: "HTTP", Host: "169.254.169.254"}}
		}, "spec.probes[0].probe.httpGet.host: Forbidden"},
		"tcp host": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].Probe = tcp(intstr.FromInt32(80))
			m.Spec.Probes[0].Probe.TCPSocket.Host = "127.0.0.1"
		}, "spec.probes[0].probe.tcpSocket.host: Forbidden"},
		"Ready condition":    {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].PodConditionType = "Ready" }, "spec.probes[0].podConditionType: Invalid value: \"Ready\": is a pod condition Kubernetes or Kruise owns"},
		"in-place condition": {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].PodConditionType = "InPlaceUpdateReady" }, "is a pod condition Kubernetes or Kruise owns"},
		"KruisePodReady":     {func(m *v1alpha1.PodProbeMarker) { m.Spec.Probes[0].PodConditionType = "KruisePodReady" }, "is a pod condition Kubernetes or Kruise owns"},
		"specified-delete mark": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].MarkerPolicy[0].Labels = map[string]string{"apps.kruise.io/specified-delete": "true"}
		}, "spec.probes[0].markerPolicy[0].labels[apps.kruise.io/specified-delete]: Invalid value"},
		"no-protect mark": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].MarkerPolicy[0].Annotations = map[string]string{"pub.kruise.io/no-protect": "true"}
		}, "spec.probes[0].markerPolicy[0].annotations[pub.kruise.io/no-protect]"},
		"kubernetes.io mark": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].MarkerPolicy[0].Labels = map[string]string{"kubernetes.io/hostname": "n1"}
		}, "must not be under kubernetes.io/"},
		"k8s.io mark": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].MarkerPolicy[0].Annotations = map[string]string{"k8s.io/x": "1"}
		}, "must not be under kubernetes.io/"},
		"bad label": {func(m *v1alpha1.PodProbeMarker) {
			m.Spec.Probes[0].MarkerPolicy[0].Labels = map[string]string{"a": "not valid!"}
		}, "spec.probes[0].markerPolicy[0].labels"},
	} {
		m := validMarker()
		tc.mutate(m)
		errs := ValidatePodProbeMarker(m)
		if !strings.Contains(errs.ToAggregate().Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, errs, tc.want)
		}
	}
	old, cur := validMarker(), validMarker()
	cur.Spec.Selector.MatchLabels["app"] = "web"
	if _, err := (podProbeMarkerValidator{}).ValidateUpdate(context.Background(), old, cur); err == nil || !strings.Contains(err.Error(), "spec.selector: Forbidden") {
		t.Errorf("selector change: %v", err)
	}
	cur = validMarker()
	cur.Finalizers = []string{"x"}
	if _, err := (podProbeMarkerValidator{}).ValidateUpdate(context.Background(), old, cur); err != nil {
		t.Errorf("metadata-only update refused: %v", err)
	}
}

func tcp(port intstr.IntOrString) v1alpha1.PodProbeMarkerProbeSpec {
	return v1alpha1.PodProbeMarkerProbeSpec{TCPSocket: &corev1.TCPSocketAction{Port: port}}
}

func TestPodProbeMarkerKeepsMarksOfOthersDomains(t *testing.T) {
	m := validMarker()
	m.Spec.Probes[0].MarkerPolicy[0].Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "-5", "example.com/role": "leader"}
	if errs := ValidatePodProbeMarker(m); len(errs) != 0 {
		t.Errorf("pod-deletion-cost and a team's own key refused: %v", errs)
	}
}

// probe.terminationGracePeriodSeconds is accepted, as OpenKruise accepts it, with a warning that
// it changes nothing.
func TestPodProbeMarkerWarnsOfTerminationGracePeriod(t *testing.T) {
	m := validMarker()
	if w := PodProbeMarkerWarnings(m); len(w) != 0 {
		t.Errorf("warnings without the field: %v", w)
	}
	grace := int64(30)
	m.Spec.Probes[0].Probe.TerminationGracePeriodSeconds = &grace
	if errs := ValidatePodProbeMarker(m); len(errs) != 0 {
		t.Fatalf("refused: %v", errs)
	}
	w := PodProbeMarkerWarnings(m)
	if len(w) != 1 || !strings.Contains(w[0], "spec.probes[0].probe.terminationGracePeriodSeconds: has no effect") {
		t.Errorf("warnings %v", w)
	}
}
