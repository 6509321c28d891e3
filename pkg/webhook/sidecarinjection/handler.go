package sidecarinjection

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
	"github.com/kruise-ng/kruise/pkg/platform/liveread"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
)

// PathPrefix is where the injection entries call: PathPrefix + the SidecarSet's name.
const PathPrefix = "/mutate-pod-sidecarset/"

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets,verbs=list;watch

// Handler injects the sidecars of every SidecarSet that selects a pod being created
// (sidecarrules.Inject). The SidecarSet named by the request path selects the pod (its entry was
// called for it): when the manager's cache does not know it yet, or knows an older spec that does
// not select the pod, it is read from the API server, so a pod created after that SidecarSet's
// create or update returned always gets its sidecars.
type Handler struct {
	// Reader reads SidecarSets, Namespaces and ControllerRevisions, normally from the cache.
	Reader client.Reader
	// Live reads what Reader does not know yet (a SidecarSet created moments ago).
	Live client.Reader
	// RevisionNamespace holds the SidecarSets' ControllerRevisions (the manager's namespace, as in
	// OpenKruise).
	RevisionNamespace string
	Decoder           admission.Decoder
	Clock             clock.PassiveClock
}

// Register serves h on srv under PathPrefix: PathPrefix + the SidecarSet's name.
func Register(srv webhook.Server, scheme *runtime.Scheme, h *Handler) {
	if h.Decoder == nil {
		h.Decoder = admission.NewDecoder(scheme)
	}
	if h.Clock == nil {
		h.Clock = clock.RealClock{}
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
	required := mount.Suffix(ctx) // the SidecarSet whose entry called
	out, err := h.inject(ctx, pod, req.Namespace, required)
	if err != nil {
		return admission.Denied(err.Error())
	}
	if out == nil {
		return admission.Allowed("no SidecarSet to inject")
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// inject returns pod with the sidecars of the SidecarSets that select it, or nil when there are
// none.
func (h *Handler) inject(ctx context.Context, pod *corev1.Pod, namespace, required string) (*corev1.Pod, error) {
	ns := &corev1.Namespace{}
	if err := h.Reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read namespace %s: %w", namespace, err)
	}
	given := pod.Namespace
	pod.Namespace = namespace // the object of a creation may name none; matching needs it
	defer func() { pod.Namespace = given }()
	sets, err := h.sets(ctx, pod, ns.Labels, required)
	if err != nil {
		return nil, err
	}
	// Every SidecarSet that selects the pod, whatever its annotations say (doc.go).
	revisions, err := h.revisions(ctx, sets)
	if err != nil {
		return nil, err
	}
	res, err := sidecarrules.Inject(pod, sets, sidecarrules.Options{
		NamespaceLabels: ns.Labels,
		Now:             metav1.NewTime(h.Clock.Now()),
		Revisions:       revisions,
		Draw:            rand.Float64,
	})
	if err != nil {
		return nil, fmt.Errorf("the pod's sidecars cannot be injected: %w", err)
	}
	if len(res.Injected) == 0 {
		return nil, nil
	}
	// As in OpenKruise, the launch order counts the sidecars: their KRUISE_CONTAINER_PRIORITY, or
	// their place under Ordered (the pod webhook's entry ran before them).
	if _, err := podmutation.InjectLaunchBarrier(res.Pod); err != nil {
		return nil, fmt.Errorf("the pod's container launch priority: %w", err)
	}
	res.Pod.Namespace = given
	return res.Pod, nil
}

// sets lists the SidecarSets, with required read from the API server when the cache lacks it or
// has a spec of it that does not select pod (a SidecarSet deleted meanwhile is left out).
func (h *Handler) sets(ctx context.Context, pod *corev1.Pod, namespaceLabels map[string]string, required string) ([]*v1beta1.SidecarSet, error) {
	list := &v1beta1.SidecarSetList{}
	if err := h.Reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list SidecarSets: %w", err)
	}
	out := make([]*v1beta1.SidecarSet, 0, len(list.Items)+1)
	found := required == ""
	for i := range list.Items {
		s := &list.Items[i]
		if s.Name == required {
			if ok, _ := sidecarrules.Matches(pod, s, namespaceLabels); !ok {
				continue // an older spec than the entry's: read below
			}
			found = true
		}
		out = append(out, s)
	}
	if !found && h.Live != nil {
		set, ok, err := liveread.ByName[*v1beta1.SidecarSet](ctx, h.Live, &v1beta1.SidecarSetList{}, "", required)
		if err != nil {
			return nil, fmt.Errorf("read SidecarSet %s: %w", required, err)
		}
		if ok {
			out = append(out, set)
		}
	}
	return out, nil
}

// revisions reads the ControllerRevisions of the SidecarSets that pin one.
func (h *Handler) revisions(ctx context.Context, sets []*v1beta1.SidecarSet) (map[string][]*appsv1.ControllerRevision, error) {
	out := map[string][]*appsv1.ControllerRevision{}
	for _, s := range sets {
		if s.Spec.InjectionStrategy.Revision == nil {
			continue
		}
		list := &appsv1.ControllerRevisionList{}
		if err := h.Reader.List(ctx, list, client.InNamespace(h.RevisionNamespace),
			client.MatchingLabels{sidecarrules.RevisionOwnerLabel: s.Name}); err != nil {
			return nil, fmt.Errorf("list the revisions of SidecarSet %s: %w", s.Name, err)
		}
		for i := range list.Items {
			out[s.Name] = append(out[s.Name], &list.Items[i])
		}
	}
	return out, nil
}
