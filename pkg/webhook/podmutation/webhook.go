package podmutation

import (
	"context"
	"encoding/json"
	"net/http"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/podgate"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// Path is where the webhook is served; WebhookName names it in the MutatingWebhookConfiguration.
const (
	Path        = "/mutate-pod"
	WebhookName = "mpod.kruise.io"
)

// +kubebuilder:webhook:path=/mutate-pod,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups="",resources=pods,verbs=create,versions=v1,name=mpod.kruise.io,admissionReviewVersions=v1,timeoutSeconds=10

// Spreads places the pods a WorkloadSpread spreads (pkg/webhook/spreadplacement's Handler): the
// spreads' own webhook entries leave out the pods this webhook is called for, so a CloneSet pod
// under a spread costs the API server one webhook call.
type Spreads interface {
	// ForwardPod has the replica that decides the spreads' placements answer the call when a
	// spread places the pod and this replica does not decide; false: answer it here.
	ForwardPod(ctx context.Context, path string, req admission.Request) (admission.Response, bool)
	// PlaceAny returns pod placed by the spread that spreads it; nil when none does.
	PlaceAny(ctx context.Context, pod *corev1.Pod, dryRun bool) (*corev1.Pod, error)
}

// Register serves the webhook on srv; spreads, when not nil, places the pods of WorkloadSpreads too.
func Register(srv webhook.Server, scheme *runtime.Scheme, spreads Spreads) {
	h := &Handler{Decoder: admission.NewDecoder(scheme), Spreads: spreads}
	mount.Admission(srv, Path, h)
	mount.Admission(srv, LaunchPriorityPath, admission.HandlerFunc(h.handleLaunchPriority))
}

// Handler answers the webhook's calls.
type Handler struct {
	Decoder admission.Decoder
	Spreads Spreads
}

// Handle adds the gate to a pod of a Kruise workload and places it when a spread spreads it.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if h.Spreads != nil {
		if resp, ok := h.Spreads.ForwardPod(ctx, Path, req); ok {
			return resp
		}
	}
	pod := &corev1.Pod{}
	if err := h.Decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	podgate.AddKruisePodReady(pod)
	if h.Spreads != nil {
		placed, err := h.Spreads.PlaceAny(ctx, pod, req.DryRun != nil && *req.DryRun)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if placed != nil {
			pod = placed
		}
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// ScopeOptions configure which admissions call the webhook.
type ScopeOptions struct {
	// FailurePolicy applies when the webhook cannot be reached: Fail refuses the pod (its workload
	// retries), Ignore admits it without the gate.
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// ExcludedNamespaces never call the webhook (the control plane's and Kruise's own).
	ExcludedNamespaces []string
}

// Scope sets the webhook's selectors and failure policy on its entry in a configuration, outside
// the excluded namespaces: only pods labelled by a Kruise workload, or for the launch priority
// entry (LaunchPriorityWebhookName) only pods that ask for a launch order.
func Scope(w *admissionregistrationv1.MutatingWebhook, o ScopeOptions) {
	fp := o.FailurePolicy
	w.FailurePolicy = &fp
	w.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: o.ExcludedNamespaces},
	}}
	if w.Name == LaunchPriorityWebhookName {
		scopeLaunchPriority(w)
		return
	}
	w.ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: v1alpha1.CloneSetInstanceIDLabelKey, Operator: metav1.LabelSelectorOpExists},
	}}
}
