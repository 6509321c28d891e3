package podmutation

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

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func owned(apiVersion, kind string, controller bool) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "x", UID: "u", Controller: ptr.To(controller)}}
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
