package topologypin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/platform/liveread"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// Handler injects the recorded topology of the PersistentPodState an entry names into a pod being
// created (Inject). When the manager's cache does not know that PersistentPodState yet, it is read
// from the API server.
type Handler struct {
	// Reader reads PersistentPodStates, normally from the cache; Live reads what Reader does not
	// know yet.
	Reader, Live client.Reader
	Decoder      admission.Decoder
}

// Register serves h on srv under PathPrefix.
func Register(srv webhook.Server, scheme *runtime.Scheme, h *Handler) {
	if h.Decoder == nil {
		h.Decoder = admission.NewDecoder(scheme)
	}
	mount.Admission(srv, PathPrefix, h)
}

// Handle answers one admission of a pod creation.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || req.SubResource != "" || req.Resource.Resource != "pods" {
		return admission.Allowed("not a pod creation")
	}
	pod := &corev1.Pod{}
	if err := h.Decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	ns, name, _ := strings.Cut(mount.Suffix(ctx), "/")
	if ns != req.Namespace || name == "" {
		return admission.Allowed("no PersistentPodState of the pod's namespace is named")
	}
	pps, err := h.state(ctx, ns, name)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if pps == nil || pps.DeletionTimestamp != nil || !Targets(pps, pod) {
		return admission.Allowed("no PersistentPodState selects the pod")
	}
	if !Inject(pod, pps) {
		return admission.Allowed("no topology recorded for the pod")
	}
	log.FromContext(ctx).V(1).Info("injected the recorded topology", "pod", req.Namespace+"/"+pod.Name, "persistentPodState", name,
		"nodeSelector", pod.Spec.NodeSelector)
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// state reads PersistentPodState namespace/name, nil when it does not exist.
func (h *Handler) state(ctx context.Context, namespace, name string) (*v1alpha1.PersistentPodState, error) {
	pps := &v1alpha1.PersistentPodState{}
	err := h.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pps)
	if err == nil {
		return pps, nil
	}
	if !apierrors.IsNotFound(err) || h.Live == nil {
		return nil, client.IgnoreNotFound(err)
	}
	live, _, err := liveread.ByName[*v1alpha1.PersistentPodState](ctx, h.Live, &v1alpha1.PersistentPodStateList{}, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("read PersistentPodState %s/%s: %w", namespace, name, err)
	}
	return live, nil
}
