package v1alpha1

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// TestDaemonSetHubToV1alpha1 shows what a v1alpha1 client sees of a stored (v1beta1) DaemonSet:
// status.updateRevision as status.daemonSetHash, partitionedScaling as the progressive-create-pod
// annotation, and the rest of the v1beta1 state kept aside so that writing the object back
// through v1alpha1 changes nothing.
func TestDaemonSetHubToV1alpha1(t *testing.T) {
	const key = DaemonSetProgressiveCreatePodAnnotation
	partitioned := &v1beta1.DaemonSetScaleStrategy{PartitionedScaling: true}
	cases := []struct {
		name        string
		scale       *v1beta1.DaemonSetScaleStrategy
		annotations map[string]string
		// wantShown is the progressive-create-pod annotation of the v1alpha1 object ("": none).
		wantShown string
		// wantStash is ConversionV1beta1OnlyAnnotation on the v1alpha1 object ("": none).
		wantStash string
	}{
		{name: "no scale strategy", wantStash: ""},
		{name: "partitioned scaling shows as the annotation", scale: partitioned,
			wantShown: "true", wantStash: `{"metadata":{"progressiveCreatePod":null}}`},
		{name: "partitioned scaling with the annotation already there (created through v1alpha1)", scale: partitioned,
			annotations: map[string]string{key: "true"}, wantShown: "true"},
		{name: "partitioned scaling with another annotation value", scale: partitioned,
			annotations: map[string]string{key: "false"}, wantShown: "true", wantStash: `{"metadata":{"progressiveCreatePod":"false"}}`},
		{name: "scaling turned off in v1beta1 after a v1alpha1 create left the annotation", scale: &v1beta1.DaemonSetScaleStrategy{},
			annotations: map[string]string{key: "true", "keep": "me"},
			wantStash:   `{"metadata":{"progressiveCreatePod":"true"},"spec":{"scaleStrategy":{}}}`},
		{name: "empty scale strategy is told from none", scale: &v1beta1.DaemonSetScaleStrategy{}, wantStash: `{"spec":{"scaleStrategy":{}}}`},
		{name: "an annotation that does not ask for it is shown as it is", annotations: map[string]string{key: "yes"}, wantShown: "yes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hub := &v1beta1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", Annotations: tc.annotations},
				Spec:       v1beta1.DaemonSetSpec{ScaleStrategy: tc.scale},
				Status:     v1beta1.DaemonSetStatus{UpdateRevision: "7c9f", DesiredNumberScheduled: 4},
			}
			alpha := &DaemonSet{}
			if err := alpha.ConvertFrom(hub); err != nil {
				t.Fatal(err)
			}
			if alpha.Status.DaemonSetHash != "7c9f" || alpha.Status.DesiredNumberScheduled != 4 {
				t.Fatalf("status not carried over (daemonSetHash %q): %+v", alpha.Status.DaemonSetHash, alpha.Status)
			}
			checkAnnotation(t, alpha.Annotations, key, tc.wantShown)
			checkAnnotation(t, alpha.Annotations, ConversionV1beta1OnlyAnnotation, tc.wantStash)
			if tc.annotations["keep"] != "" && alpha.Annotations["keep"] != "me" {
				t.Fatalf("other annotations lost: %v", alpha.Annotations)
			}
			back := &v1beta1.DaemonSet{}
			if err := alpha.ConvertTo(back); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(hub, back) {
				t.Fatalf("round trip differs:\n%s", diff.Diff(hub, back))
			}
		})
	}
}

// TestDaemonSetV1alpha1ToHub shows how OpenKruise's v1alpha1 objects are stored: the
// progressive-create-pod annotation "true" turns on partitionedScaling and stays on the object,
// status.daemonSetHash becomes status.updateRevision, and the deprecated rollingUpdateType
// Surging becomes Standard.
func TestDaemonSetV1alpha1ToHub(t *testing.T) {
	alpha := &DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns",
			Annotations: map[string]string{DaemonSetProgressiveCreatePodAnnotation: "true", "other": "keep-this"}},
		Spec: DaemonSetSpec{UpdateStrategy: DaemonSetUpdateStrategy{Type: DaemonSetRollingUpdateStrategyType,
			RollingUpdate: &DaemonSetRollingUpdate{Type: DaemonSetStandardRollingUpdateType, MaxUnavailable: ptr.To(intstr.FromInt32(1)),
				Partition: ptr.To(intstr.FromString("50%")), Paused: ptr.To(true)}}},
		Status: DaemonSetStatus{DaemonSetHash: "abc123", UpdatedNumberScheduled: 2},
	}
	hub := &v1beta1.DaemonSet{}
	if err := alpha.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if ss := hub.Spec.ScaleStrategy; ss == nil || !ss.PartitionedScaling {
		t.Fatalf("scaleStrategy = %+v, want partitionedScaling", ss)
	}
	if hub.Annotations[DaemonSetProgressiveCreatePodAnnotation] != "true" || hub.Annotations["other"] != "keep-this" {
		t.Fatalf("annotations = %v, want both kept", hub.Annotations)
	}
	if hub.Status.UpdateRevision != "abc123" || hub.Status.UpdatedNumberScheduled != 2 {
		t.Fatalf("status = %+v, want updateRevision abc123", hub.Status)
	}
	if p := hub.Spec.UpdateStrategy.RollingUpdate.Partition; p == nil || *p != intstr.FromString("50%") {
		t.Fatalf("partition = %v", p)
	}
	back := &DaemonSet{}
	if err := back.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(alpha, back) {
		t.Fatalf("round trip differs:\n%s", diff.Diff(alpha, back))
	}

	alpha.Spec.UpdateStrategy.RollingUpdate.Type = DaemonSetSurgingRollingUpdateType
	if err := alpha.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if got := hub.Spec.UpdateStrategy.RollingUpdate.Type; got != v1beta1.DaemonSetStandardRollingUpdateType {
		t.Fatalf("Surging converted to %q, want Standard", got)
	}
}

// TestDaemonSetEditThroughV1alpha1 checks that a v1alpha1 client turns partitioned scaling on and
// off with the annotation, and that changing other fields keeps the v1beta1 state.
func TestDaemonSetEditThroughV1alpha1(t *testing.T) {
	hub := &v1beta1.DaemonSet{Spec: v1beta1.DaemonSetSpec{ScaleStrategy: &v1beta1.DaemonSetScaleStrategy{}, MinReadySeconds: 5}}
	alpha := &DaemonSet{}
	if err := alpha.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	alpha.Annotations[DaemonSetProgressiveCreatePodAnnotation] = "true"
	got := &v1beta1.DaemonSet{}
	if err := alpha.ConvertTo(got); err != nil {
		t.Fatal(err)
	}
	if ss := got.Spec.ScaleStrategy; ss == nil || !ss.PartitionedScaling || got.Spec.MinReadySeconds != 5 {
		t.Fatalf("turning it on: scaleStrategy %+v, minReadySeconds %d", ss, got.Spec.MinReadySeconds)
	}

	if err := alpha.ConvertFrom(got); err != nil {
		t.Fatal(err)
	}
	delete(alpha.Annotations, DaemonSetProgressiveCreatePodAnnotation)
	alpha.Spec.MinReadySeconds = 9
	if err := alpha.ConvertTo(got); err != nil {
		t.Fatal(err)
	}
	if ss := got.Spec.ScaleStrategy; (ss != nil && ss.PartitionedScaling) || got.Spec.MinReadySeconds != 9 {
		t.Fatalf("turning it off: scaleStrategy %+v, minReadySeconds %d", ss, got.Spec.MinReadySeconds)
	}
	if _, ok := got.Annotations[DaemonSetProgressiveCreatePodAnnotation]; ok {
		t.Fatalf("the hub never had the annotation, got %v", got.Annotations)
	}
}
