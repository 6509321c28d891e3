package podgate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func owned(apiVersion, kind string, controller bool) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "x", UID: "u", Controller: ptr.To(controller)}}
}

func TestAddKruisePodReady(t *testing.T) {
	existing := []corev1.PodReadinessGate{{ConditionType: "user/gate"}}
	for _, tc := range []struct {
		name   string
		owners []metav1.OwnerReference
		gates  []corev1.PodReadinessGate
		want   bool
	}{
		{"CloneSet v1alpha1", owned("apps.kruise.io/v1alpha1", "CloneSet", true), nil, true},
		{"CloneSet keeps the user's gates", owned("apps.kruise.io/v1alpha1", "CloneSet", true), existing, true},
		{"already gated", owned("apps.kruise.io/v1alpha1", "CloneSet", true),
			[]corev1.PodReadinessGate{{ConditionType: appspub.KruisePodReadyConditionType}}, false},
		{"owner that is not the controller", owned("apps.kruise.io/v1alpha1", "CloneSet", false), nil, false},
		{"ReplicaSet", owned("apps/v1", "ReplicaSet", true), nil, false},
		{"another group's CloneSet", owned("example.com/v1", "CloneSet", true), nil, false},
		{"Kruise kind without pods of its own here", owned("apps.kruise.io/v1alpha1", "BroadcastJob", true), nil, false},
		{"no owner", nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tc.owners},
				Spec: corev1.PodSpec{ReadinessGates: append([]corev1.PodReadinessGate(nil), tc.gates...)}}
			if got := AddKruisePodReady(pod); got != tc.want {
				t.Fatalf("AddKruisePodReady = %v, want %v", got, tc.want)
			}
			wantLen := len(tc.gates)
			if tc.want {
				wantLen++
			}
			gates := pod.Spec.ReadinessGates
			if len(gates) != wantLen || tc.want && gates[wantLen-1].ConditionType != appspub.KruisePodReadyConditionType {
				t.Errorf("gates after AddKruisePodReady: %v", gates)
			}
		})
	}
}
