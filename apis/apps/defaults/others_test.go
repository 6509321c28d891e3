package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func TestSetDefaultsContainerRecreateRequest(t *testing.T) {
	userSet := &v1alpha1.ContainerRecreateRequest{Spec: v1alpha1.ContainerRecreateRequestSpec{
		PodName: "p",
		Containers: []v1alpha1.ContainerRecreateRequestContainer{{
			Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolUDP}},
		}},
		Strategy: &v1alpha1.ContainerRecreateRequestStrategy{
			FailurePolicy: v1alpha1.ContainerRecreateRequestFailurePolicyIgnore, OrderedRecreate: true,
			TerminationGracePeriodSeconds: i64(0), UnreadyGracePeriodSeconds: i64(0),
		},
		ActiveDeadlineSeconds:   i64(0),
		TTLSecondsAfterFinished: i32(0),
	}}
	run(t, []tcase[v1alpha1.ContainerRecreateRequest]{
		{
			name: "empty object gets every default",
			in: &v1alpha1.ContainerRecreateRequest{Spec: v1alpha1.ContainerRecreateRequestSpec{
				Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
			}},
			want: &v1alpha1.ContainerRecreateRequest{Spec: v1alpha1.ContainerRecreateRequestSpec{
				Containers: []v1alpha1.ContainerRecreateRequestContainer{{
					Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				}},
				Strategy: &v1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: v1alpha1.ContainerRecreateRequestFailurePolicyFail},
			}},
		},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsContainerRecreateRequest, (*v1alpha1.ContainerRecreateRequest).DeepCopy)
}

// TestSetDefaultsWorkloadSpread: OpenKruise v1.9.0 stores a WorkloadSpread as given, so Kruise
// writes nothing either (an unset scheduleStrategy.type is read as Fixed).
func TestSetDefaultsWorkloadSpread(t *testing.T) {
	userSet := &v1alpha1.WorkloadSpread{Spec: v1alpha1.WorkloadSpreadSpec{
		ScheduleStrategy: v1alpha1.WorkloadSpreadScheduleStrategy{
			Type:     v1alpha1.WorkloadSpreadAdaptiveScheduleStrategy,
			Adaptive: &v1alpha1.WorkloadSpreadAdaptiveStrategy{RescheduleCriticalSeconds: i32(0)},
		},
	}}
	run(t, []tcase[v1alpha1.WorkloadSpread]{
		{name: "empty object stays empty, as OpenKruise stores it", in: &v1alpha1.WorkloadSpread{}, want: &v1alpha1.WorkloadSpread{}},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsWorkloadSpread, (*v1alpha1.WorkloadSpread).DeepCopy)
}

// TestSetDefaultsUnitedDeployment: OpenKruise v1.9.0's defaults (replicas, revisionHistoryLimit,
// the Manual strategy with an empty manualUpdate), and no schedule strategy defaults.
func TestSetDefaultsUnitedDeployment(t *testing.T) {
	userSet := &v1alpha1.UnitedDeployment{Spec: v1alpha1.UnitedDeploymentSpec{
		Replicas:             i32(0),
		RevisionHistoryLimit: i32(0),
		UpdateStrategy:       v1alpha1.UnitedDeploymentUpdateStrategy{Type: "Other"},
		Topology: v1alpha1.UnitedDeploymentTopology{ScheduleStrategy: v1alpha1.UnitedDeploymentScheduleStrategy{
			Type: v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType,
			Adaptive: &v1alpha1.UnitedDeploymentAdaptiveStrategy{
				RescheduleCriticalSeconds: i32(0), UnschedulableDuration: i32(0),
			},
		}},
	}}
	partitions := &v1alpha1.UnitedDeployment{Spec: v1alpha1.UnitedDeploymentSpec{
		Replicas: i32(3), RevisionHistoryLimit: i32(10),
		UpdateStrategy: v1alpha1.UnitedDeploymentUpdateStrategy{Type: v1alpha1.ManualUnitedDeploymentUpdateStrategyType,
			ManualUpdate: &v1alpha1.UnitedDeploymentManualUpdate{Partitions: map[string]int32{"a": 1}}},
	}}
	run(t, []tcase[v1alpha1.UnitedDeployment]{
		{
			name: "empty object gets every default",
			in:   &v1alpha1.UnitedDeployment{},
			want: &v1alpha1.UnitedDeployment{Spec: v1alpha1.UnitedDeploymentSpec{
				Replicas:             i32(1),
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1alpha1.UnitedDeploymentUpdateStrategy{Type: v1alpha1.ManualUnitedDeploymentUpdateStrategyType,
					ManualUpdate: &v1alpha1.UnitedDeploymentManualUpdate{}},
			}},
		},
		{
			name: "adaptive strategy is stored as given (30 s and 300 s are read, not written)",
			in: &v1alpha1.UnitedDeployment{Spec: v1alpha1.UnitedDeploymentSpec{
				Topology: v1alpha1.UnitedDeploymentTopology{ScheduleStrategy: v1alpha1.UnitedDeploymentScheduleStrategy{
					Type: v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType, Adaptive: &v1alpha1.UnitedDeploymentAdaptiveStrategy{},
				}},
			}},
			want: &v1alpha1.UnitedDeployment{Spec: v1alpha1.UnitedDeploymentSpec{
				Replicas:             i32(1),
				RevisionHistoryLimit: i32(10),
				UpdateStrategy: v1alpha1.UnitedDeploymentUpdateStrategy{Type: v1alpha1.ManualUnitedDeploymentUpdateStrategyType,
					ManualUpdate: &v1alpha1.UnitedDeploymentManualUpdate{}},
				Topology: v1alpha1.UnitedDeploymentTopology{ScheduleStrategy: v1alpha1.UnitedDeploymentScheduleStrategy{
					Type: v1alpha1.AdaptiveUnitedDeploymentScheduleStrategyType, Adaptive: &v1alpha1.UnitedDeploymentAdaptiveStrategy{},
				}},
			}},
		},
		{name: "manual partitions kept", in: partitions, want: partitions.DeepCopy()},
		{name: "user-set values kept (no manualUpdate for another type)", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsUnitedDeployment, (*v1alpha1.UnitedDeployment).DeepCopy)
}

// TestSetDefaultsPersistentPodState: OpenKruise v1.9.0 stores a PersistentPodState as given, so
// Kruise writes nothing either (an unset retention policy is read as WhenScaled).
func TestSetDefaultsPersistentPodState(t *testing.T) {
	userSet := &v1alpha1.PersistentPodState{Spec: v1alpha1.PersistentPodStateSpec{
		PersistentPodStateRetentionPolicy: v1alpha1.PersistentPodStateRetainWhenDeleted,
	}}
	run(t, []tcase[v1alpha1.PersistentPodState]{
		{name: "empty object stays empty, as OpenKruise stores it", in: &v1alpha1.PersistentPodState{}, want: &v1alpha1.PersistentPodState{}},
		{name: "user-set values kept", in: userSet, want: userSet.DeepCopy()},
	}, SetDefaultsPersistentPodState, (*v1alpha1.PersistentPodState).DeepCopy)
}

func emptyProbe() v1alpha1.PodProbeMarkerProbeSpec {
	return v1alpha1.PodProbeMarkerProbeSpec{
		HTTPGet: &v1alpha1.PodProbeMarkerHTTPGetAction{},
		GRPC:    &v1alpha1.PodProbeMarkerGRPCAction{Port: 9090},
	}
}

func defaultedProbe() v1alpha1.PodProbeMarkerProbeSpec {
	return v1alpha1.PodProbeMarkerProbeSpec{
		HTTPGet:          &v1alpha1.PodProbeMarkerHTTPGetAction{Scheme: corev1.URISchemeHTTP},
		GRPC:             &v1alpha1.PodProbeMarkerGRPCAction{Port: 9090, Service: sp("")},
		TimeoutSeconds:   1,
		PeriodSeconds:    10,
		SuccessThreshold: 1,
		FailureThreshold: 3,
	}
}

func userProbe() v1alpha1.PodProbeMarkerProbeSpec {
	return v1alpha1.PodProbeMarkerProbeSpec{
		HTTPGet:          &v1alpha1.PodProbeMarkerHTTPGetAction{Scheme: corev1.URISchemeHTTPS},
		GRPC:             &v1alpha1.PodProbeMarkerGRPCAction{Port: 9090, Service: sp("svc")},
		TimeoutSeconds:   5,
		PeriodSeconds:    30,
		SuccessThreshold: 2,
		FailureThreshold: 7,
	}
}

func TestSetDefaultsPodProbeMarker(t *testing.T) {
	mk := func(p v1alpha1.PodProbeMarkerProbeSpec) *v1alpha1.PodProbeMarker {
		return &v1alpha1.PodProbeMarker{Spec: v1alpha1.PodProbeMarkerSpec{
			Probes: []v1alpha1.PodProbeMarkerProbe{{Name: "healthy", ContainerName: "main", Probe: p}},
		}}
	}
	run(t, []tcase[v1alpha1.PodProbeMarker]{
		{name: "empty object unchanged", in: &v1alpha1.PodProbeMarker{}, want: &v1alpha1.PodProbeMarker{}},
		{name: "probe gets every default", in: mk(emptyProbe()), want: mk(defaultedProbe())},
		{name: "user-set values kept", in: mk(userProbe()), want: mk(userProbe())},
	}, SetDefaultsPodProbeMarker, (*v1alpha1.PodProbeMarker).DeepCopy)
}

func TestSetDefaultsNodePodProbe(t *testing.T) {
	mk := func(p v1alpha1.PodProbeMarkerProbeSpec) *v1alpha1.NodePodProbe {
		return &v1alpha1.NodePodProbe{Spec: v1alpha1.NodePodProbeSpec{
			PodProbes: []v1alpha1.NodePodProbePodProbe{{
				Name: "pod", Namespace: "ns", UID: "u",
				Probes: []v1alpha1.NodePodProbeContainerProbe{{Name: "healthy", ContainerName: "main", Probe: p}},
			}},
		}}
	}
	run(t, []tcase[v1alpha1.NodePodProbe]{
		{name: "empty object unchanged", in: &v1alpha1.NodePodProbe{}, want: &v1alpha1.NodePodProbe{}},
		{name: "probe gets every default", in: mk(emptyProbe()), want: mk(defaultedProbe())},
		{name: "user-set values kept", in: mk(userProbe()), want: mk(userProbe())},
	}, SetDefaultsNodePodProbe, (*v1alpha1.NodePodProbe).DeepCopy)
}

func TestSetDefaultsResourceDistribution(t *testing.T) {
	in := &v1alpha1.ResourceDistribution{Spec: v1alpha1.ResourceDistributionSpec{
		Targets: v1alpha1.ResourceDistributionTargets{AllNamespaces: true},
	}}
	run(t, []tcase[v1alpha1.ResourceDistribution]{
		{name: "empty object unchanged", in: &v1alpha1.ResourceDistribution{}, want: &v1alpha1.ResourceDistribution{}},
		{name: "user-set values kept", in: in, want: in.DeepCopy()},
	}, SetDefaultsResourceDistribution, (*v1alpha1.ResourceDistribution).DeepCopy)
}
