package workloadspread

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/subset"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
	"github.com/kruise-ng/kruise/pkg/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/workloadspread"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=list;watch

// Handler answers the WorkloadSpread entries' calls.
type Handler struct {
	// Reader reads spreads, pods and workloads, normally from the cache; Live reads a spread
	// afresh when the cache does not know it yet or after a conflicting status write.
	Reader, Live client.Reader
	// Writer writes the spreads' status.
	Writer client.Client
	Finder *workloadfinder.Finder
	// Recorder receives an event on the spread when a pod finds no subset; nil drops them.
	Recorder events.EventRecorder
	Decoder  admission.Decoder
	Clock    clock.PassiveClock

	queues  sync.Map // spread namespace/name → *queue: the decisions waiting for one status write
	written sync.Map // spread namespace/name → the *WorkloadSpread this handler last wrote
}

// Register serves h on srv under PathPrefix.
func Register(srv webhook.Server, scheme *runtime.Scheme, h *Handler) {
	if h.Decoder == nil {
		h.Decoder = admission.NewDecoder(scheme)
	}
	if h.Clock == nil {
		h.Clock = clock.RealClock{}
	}
	registration.Serve(srv, PathPrefix, h.Handle)
}

// Handle answers one admission: a pod creation is placed; a deletion or eviction is recorded.
// Only a creation is ever refused, and only when its spread cannot be read or written.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	return h.handle(ctx, req, registration.Suffix(ctx))
}

// handle answers req called at the entry path PathPrefix + suffix.
func (h *Handler) handle(ctx context.Context, req admission.Request, suffix string) admission.Response {
	dryRun := req.DryRun != nil && *req.DryRun
	switch {
	case req.Operation == admissionv1.Create && req.SubResource == "":
		pod := &corev1.Pod{}
		if err := h.Decoder.Decode(req, pod); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if pod.Namespace == "" {
			pod.Namespace = req.Namespace
		}
		_, name, _ := strings.Cut(suffix, "/")
		placed, err := h.place(ctx, pod, name, dryRun)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if placed == nil {
			return admission.Allowed("no WorkloadSpread places the pod")
		}
		raw, err := json.Marshal(placed)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		return admission.PatchResponseFromRaw(req.Object.Raw, raw)
	case req.Operation == admissionv1.Delete && req.SubResource == "":
		pod := &corev1.Pod{}
		if err := h.Decoder.DecodeRaw(req.OldObject, pod); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		h.release(ctx, pod, dryRun)
	case req.Operation == admissionv1.Create && req.SubResource == "eviction":
		pod := &corev1.Pod{}
		if err := h.Reader.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, pod); err == nil {
			h.release(ctx, pod, dryRun)
		}
	}
	return admission.Allowed("")
}

// place returns pod placed into its subset of the spread named name, or nil when the spread does
// not spread it or has no subset for it; the placement is recorded in the spread's status.
func (h *Handler) place(ctx context.Context, pod *corev1.Pod, name string, dryRun bool) (*corev1.Pod, error) {
	if !workloadfinder.Active(pod) {
		return nil, nil
	}
	ws, err := h.spread(ctx, pod.Namespace, name)
	if err != nil || ws == nil || ws.DeletionTimestamp != nil {
		return nil, err
	}
	if ok, err := h.spreads(ctx, ws, pod); err != nil || !ok {
		return nil, err
	}
	chosen, uid, err := h.choose(ctx, ws, pod, dryRun)
	if err != nil || chosen == "" {
		if err == nil && h.Recorder != nil {
			h.Recorder.Eventf(ws, nil, corev1.EventTypeWarning, "NoSubset", "Place",
				"pod %s placed in no subset: every subset is full or unschedulable", podName(pod))
		}
		return nil, err
	}
	for i := range ws.Spec.Subsets {
		s := &ws.Spec.Subsets[i]
		if s.Name != chosen {
			continue
		}
		out, err := subset.ApplyToPod(pod, s)
		if err != nil {
			return nil, fmt.Errorf("WorkloadSpread %s subset %s: %w", ws.Name, s.Name, err)
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[workloadspread.MatchedAnnotation] = workloadspread.Matched{Name: ws.Name, Subset: chosen, UID: uid}.String()
		log.FromContext(ctx).V(1).Info("placed pod", "pod", podName(pod), "workloadSpread", ws.Name, "subset", chosen)
		return out, nil
	}
	return nil, nil
}

// spreads tells whether ws spreads pod: the pod's workload is its targetRef and its targetFilter
// selects it.
func (h *Handler) spreads(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	ok, err := ControlledBy(ctx, h.Reader, h.Live, ws, pod)
	if err != nil || !ok {
		return false, err
	}
	return Filtered(ws, pod)
}

// choose picks the pod's subset, recording the creation in the status of the pod's revision when
// the subset is limited. uid is the generated key of a pod without a name.
func (h *Handler) choose(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod, dryRun bool) (string, string, error) {
	if isStatefulSet(ws) {
		slots := specOrderSlots(ws)
		return workloadspread.ChooseByOrdinal(slots, ordinalOf(pod.Name)), "", nil
	}
	creation := workloadspread.Creation{Name: pod.Name, Strategy: ws.Spec.ScheduleStrategy.Type}
	if pod.Name == "" {
		creation.GeneratedID = string(uuid.NewUUID())
	}
	var chosen string
	err := h.record(ctx, ws, workloadspread.PodVersion(pod), dryRun, func(slots []workloadspread.Slot) workloadspread.Decision {
		d := workloadspread.Choose(slots, creation)
		chosen = d.Subset
		return d
	})
	if err != nil {
		return "", "", err
	}
	if chosen == "" || pod.Name != "" {
		return chosen, "", nil
	}
	return chosen, creation.GeneratedID, nil
}

// release records a placed pod's deletion or eviction in its spread's status.
func (h *Handler) release(ctx context.Context, pod *corev1.Pod, dryRun bool) {
	m := workloadspread.MatchedOf(pod)
	if m == nil || !workloadfinder.Active(pod) || metav1.GetControllerOf(pod) == nil {
		return
	}
	ws, err := h.spread(ctx, pod.Namespace, m.Name)
	if err != nil || ws == nil || isStatefulSet(ws) {
		return
	}
	if len(ws.Spec.Subsets) == 1 && ws.Spec.Subsets[0].MaxReplicas == nil {
		return
	}
	err = h.record(ctx, ws, workloadspread.PodVersion(pod), dryRun, func(slots []workloadspread.Slot) workloadspread.Decision {
		return workloadspread.Release(slots, pod.Name, m.Subset)
	})
	if err != nil {
		log.FromContext(ctx).Error(err, "record a deletion", "pod", podName(pod), "workloadSpread", ws.Name)
	}
}

// spread reads a spread from the cache, or from the API server when the cache does not know it
// yet (an entry registered moments after the spread was created); nil when it does not exist.
func (h *Handler) spread(ctx context.Context, namespace, name string) (*appsv1alpha1.WorkloadSpread, error) {
	if name == "" {
		return nil, nil
	}
	ws := &appsv1alpha1.WorkloadSpread{}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	err := h.Reader.Get(ctx, key, ws)
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	if err != nil {
		return h.liveGet(ctx, namespace, name)
	}
	return ws, nil
}

func isStatefulSet(ws *appsv1alpha1.WorkloadSpread) bool {
	return ws.Spec.TargetReference != nil && ws.Spec.TargetReference.Kind == "StatefulSet"
}

// specOrderSlots are the subsets in spec order, each marked from the subset status of its name.
func specOrderSlots(ws *appsv1alpha1.WorkloadSpread) []workloadspread.Slot {
	marked := map[string]bool{}
	for _, s := range workloadspread.SlotsFrom(ws.Spec.Subsets, ws.Status.SubsetStatuses) {
		marked[s.Name] = s.Unschedulable
	}
	out := make([]workloadspread.Slot, 0, len(ws.Spec.Subsets))
	for _, s := range ws.Spec.Subsets {
		out = append(out, workloadspread.Slot{Name: s.Name, MaxReplicas: s.MaxReplicas, Unschedulable: marked[s.Name]})
	}
	return out
}

var ordinalSuffix = regexp.MustCompile(`-([0-9]+)$`)

// ordinalOf is the ordinal at the end of a StatefulSet pod's name; -1 when there is none.
func ordinalOf(name string) int {
	m := ordinalSuffix.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	n, err := strconv.ParseInt(m[1], 10, 32)
	if err != nil {
		return -1
	}
	return int(n)
}

func podName(pod *corev1.Pod) string {
	if pod.Name != "" {
		return pod.Namespace + "/" + pod.Name
	}
	return pod.Namespace + "/" + pod.GenerateName + "*"
}
