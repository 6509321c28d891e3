package podreadiness

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func owned(apiVersion, kind string, controller bool) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "x", UID: "u", Controller: ptr.To(controller)}}
}

func TestAddGate(t *testing.T) {
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
			if got := AddGate(pod); got != tc.want {
				t.Fatalf("AddGate = %v, want %v", got, tc.want)
			}
			wantLen := len(tc.gates)
			if tc.want {
				wantLen++
			}
			gates := pod.Spec.ReadinessGates
			if len(gates) != wantLen || tc.want && gates[wantLen-1].ConditionType != appspub.KruisePodReadyConditionType {
				t.Errorf("gates after AddGate: %v", gates)
			}
		})
	}
}

func TestScope(t *testing.T) {
	w := &admissionregistrationv1.MutatingWebhook{}
	Scope(w, ScopeOptions{FailurePolicy: admissionregistrationv1.Ignore, ExcludedNamespaces: []string{"kube-system", "kruise-system"}})
	if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("failure policy %v, want Ignore", w.FailurePolicy)
	}
	obj := w.ObjectSelector.MatchExpressions
	if len(obj) != 1 || obj[0].Key != v1alpha1.CloneSetInstanceIDLabelKey || obj[0].Operator != metav1.LabelSelectorOpExists {
		t.Errorf("object selector %v", w.ObjectSelector)
	}
	ns := w.NamespaceSelector.MatchExpressions
	if len(ns) != 1 || ns[0].Key != corev1.LabelMetadataName || ns[0].Operator != metav1.LabelSelectorOpNotIn || len(ns[0].Values) != 2 {
		t.Errorf("namespace selector %v", w.NamespaceSelector)
	}
}

// fakeSpreads places every pod by labelling it, or forwards every call.
type fakeSpreads struct{ forward bool }

func (f fakeSpreads) ForwardPod(context.Context, string, admission.Request) (admission.Response, bool) {
	return admission.Allowed("answered by the decider"), f.forward
}

func (fakeSpreads) PlaceAny(_ context.Context, pod *corev1.Pod, _ bool) (*corev1.Pod, error) {
	out := pod.DeepCopy()
	out.Labels = map[string]string{"subset": "a"}
	return out, nil
}

// One call adds the gate and the spread's placement; a call the deciding replica answers is
// returned as it answered it.
func TestHandlerPlacesSpreadPods(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns", OwnerReferences: owned("apps.kruise.io/v1alpha1", "CloneSet", true)}}
	raw, _ := json.Marshal(pod)
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns", Object: runtime.RawExtension{Raw: raw}}}
	h := &Handler{Decoder: admission.NewDecoder(scheme), Spreads: fakeSpreads{}}
	resp := h.Handle(context.Background(), req)
	var paths []string
	for _, p := range resp.Patches {
		paths = append(paths, p.Path)
	}
	if got := strings.Join(paths, " "); !resp.Allowed || !strings.Contains(got, "/metadata/labels") || !strings.Contains(got, "/spec/readinessGates") {
		t.Errorf("patch paths %q (allowed %v), want the gate and the label", got, resp.Allowed)
	}
	h.Spreads = fakeSpreads{forward: true}
	if resp := h.Handle(context.Background(), req); resp.Result == nil || resp.Result.Message != "answered by the decider" {
		t.Errorf("forwarded call answered %+v", resp.AdmissionResponse)
	}
}
