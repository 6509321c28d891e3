package spreadplacement

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/core/subset"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/decider"
	"github.com/kruise-ng/kruise/pkg/webhook/livepod"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=workloadspreads/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=list;watch

// Handler answers the WorkloadSpread entries' calls.
type Handler struct {
	// Reader reads spreads, pods and workloads, normally from the cache; Live reads a spread
	// afresh when the cache does not know it yet or after a conflicting status write, and a pod
	// the cache does not hold as a deletion names it.
	Reader, Live client.Reader
	// Writer writes the spreads' status.
	Writer client.Client
	Finder *workloadfinder.Finder
	// Recorder receives an event on the spread when a pod finds no subset; nil drops them.
	Recorder events.EventRecorder
	Decoder  admission.Decoder
	Clock    clock.PassiveClock

	// Decider, when set, tells whether this replica answers from memory, and forwards the
	// admissions to the replica that does when it is another one.
	Decider Decider

	queues sync.Map // spread namespace/name → *queue
}

// Decider is the one replica that answers the spreads' admissions from memory (the leader) as the
// other replicas see it; pkg/webhook/decider implements it.
type Decider interface {
	// Deciding reports whether this replica is the one and answers from memory now; Leading,
	// whether the others pass their calls to it (it answers them, from memory or not).
	Deciding() bool
	Leading() bool
	// Forward has the one replica answer req, sent to path of its webhook server; false when
	// there is none to ask or it did not answer.
	Forward(ctx context.Context, path string, req admission.Request) (admission.Response, bool)
}

// Register serves h on srv under PathPrefix.
func Register(srv webhook.Server, scheme *runtime.Scheme, h *Handler) {
	if h.Decoder == nil {
		h.Decoder = admission.NewDecoder(scheme)
	}
	if h.Clock == nil {
		h.Clock = clock.RealClock{}
	}
	mount.Admission(srv, PathPrefix, h)
}

// Handle answers one admission: a pod creation is placed; a deletion or eviction is recorded.
// Only a creation is ever refused, and only when its spread cannot be read or written.
// A replica that does not decide passes the call on to the one that does, or, when that one
// cannot be reached, answers it with the status written first.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	suffix := mount.Suffix(ctx)
	if h.Decider != nil && !h.Decider.Deciding() {
		start := time.Now()
		if resp, ok := h.forward(ctx, PathPrefix+suffix, req); ok {
			if req.Operation == admissionv1.Create && req.SubResource == "" && !mount.Forwarded(ctx) {
				observePlacement(answeredByDecider, start)
			}
			return resp
		}
	}
	return h.handle(ctx, req, suffix)
}

// forward answers a call this replica does not decide: passed on to the deciding replica, or
// refused when it was passed here and this replica no longer leads; false when it is to be
// answered here (no decider to reach). The decider is set and not deciding.
func (h *Handler) forward(ctx context.Context, path string, req admission.Request) (admission.Response, bool) {
	if !mount.Forwarded(ctx) {
		return h.Decider.Forward(ctx, path, req)
	}
	if !h.Decider.Leading() {
		return admission.Errored(http.StatusServiceUnavailable, errors.New(decider.NotDeciding)), true
	}
	return admission.Response{}, false
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
	case req.SubResource == "" && req.Operation == admissionv1.Delete, req.SubResource == "eviction" && req.Operation == admissionv1.Create:
		// The live pod the request names (by UID), never its oldObject: a release is recorded only
		// for a pod that exists, as it is.
		want, err := livepod.Named(req.AdmissionRequest)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		pod, err := livepod.Finder{Cache: h.Reader, API: h.Live}.Get(ctx, want)
		if err != nil {
			log.FromContext(ctx).Error(err, "read the pod of a deletion", "pod", req.Namespace+"/"+req.Name)
		}
		if pod != nil {
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
	return h.placeIn(ctx, ws, pod, dryRun)
}

// PlaceAny is place for a pod the Kruise pod webhook admits (the spreads' creation entries leave
// those out): pod placed by the spread of its namespace that spreads it, or nil when none does or
// it is placed already.
func (h *Handler) PlaceAny(ctx context.Context, pod *corev1.Pod, dryRun bool) (*corev1.Pod, error) {
	ws, err := h.spreadOf(ctx, pod)
	if err != nil || ws == nil {
		return nil, err
	}
	return h.placeIn(ctx, ws, pod, dryRun)
}

// spreadOf is the spread (from the cache) that spreads a pod not placed yet; nil when none does.
func (h *Handler) spreadOf(ctx context.Context, pod *corev1.Pod) (*appsv1alpha1.WorkloadSpread, error) {
	if !workloadfinder.Active(pod) || spreadrules.MatchedOf(pod) != nil {
		return nil, nil
	}
	list := &appsv1alpha1.WorkloadSpreadList{}
	if err := h.Reader.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b appsv1alpha1.WorkloadSpread) int { return strings.Compare(a.Name, b.Name) })
	for i := range list.Items {
		ws := &list.Items[i]
		if ws.DeletionTimestamp != nil {
			continue
		}
		if ok, err := h.spreads(ctx, ws, pod); err != nil || ok {
			return ws, err
		}
	}
	return nil, nil
}

// ForwardPod passes a pod webhook call on to the deciding replica when a spread places the pod
// and this replica does not decide; false when the call is to be answered here.
func (h *Handler) ForwardPod(ctx context.Context, path string, req admission.Request) (admission.Response, bool) {
	if h.Decider == nil || h.Decider.Deciding() || req.Operation != admissionv1.Create {
		return admission.Response{}, false
	}
	pod := &corev1.Pod{}
	if err := h.Decoder.Decode(req, pod); err != nil {
		return admission.Response{}, false
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	if ws, err := h.spreadOf(ctx, pod); err != nil || ws == nil {
		return admission.Response{}, false
	}
	start := time.Now()
	resp, ok := h.forward(ctx, path, req)
	if ok && !mount.Forwarded(ctx) {
		observePlacement(answeredByDecider, start)
	}
	return resp, ok
}

// placeIn places pod, which ws spreads.
func (h *Handler) placeIn(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod, dryRun bool) (*corev1.Pod, error) {
	answered := answeredAfterWrite
	if h.Decider != nil && h.Decider.Deciding() {
		answered = answeredFromMemory
	}
	defer observePlacement(answered, time.Now())
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
		out.Annotations[spreadrules.MatchedAnnotation] = spreadrules.Matched{Name: ws.Name, Subset: chosen, UID: uid}.String()
		if ref := ws.Spec.TargetReference; ref != nil && ref.Kind == "CloneSet" {
			// The controller's cost for it (a CloneSet's pods are all of its latest revision
			// there), written now rather than patched in a moment later.
			out.Annotations[spreadrules.DeletionCostAnnotation] = spreadrules.AdmittedCost(i, len(ws.Spec.Subsets))
		}
		log.FromContext(ctx).V(1).Info("placed pod", "pod", podName(pod), "workloadSpread", ws.Name, "subset", chosen)
		return out, nil
	}
	return nil, nil
}

// spreads tells whether ws spreads pod: the pod's workload is its targetRef and its targetFilter
// selects it.
func (h *Handler) spreads(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	ok, err := workloadfinder.SpreadControlledBy(ctx, h.Reader, h.Live, ws, pod)
	if err != nil || !ok {
		return false, err
	}
	return spreadrules.Filtered(ws, pod)
}

// choose picks the pod's subset, recording the creation in the status of the pod's revision when
// the subset is limited. uid is the generated key of a pod without a name.
func (h *Handler) choose(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod, dryRun bool) (string, string, error) {
	if isStatefulSet(ws) {
		slots := specOrderSlots(ws)
		return spreadrules.ChooseByOrdinal(slots, ordinalOf(pod.Name)), "", nil
	}
	creation := spreadrules.Creation{Name: pod.Name, Strategy: ws.Spec.ScheduleStrategy.Type}
	if pod.Name == "" {
		creation.GeneratedID = string(uuid.NewUUID())
	}
	var chosen string
	err := h.record(ctx, ws, spreadrules.PodVersion(pod), dryRun, false, func(slots []spreadrules.Slot) spreadrules.Decision {
		d := spreadrules.Choose(slots, creation)
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
	m := spreadrules.MatchedOf(pod)
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
	err = h.record(ctx, ws, spreadrules.PodVersion(pod), dryRun, true, func(slots []spreadrules.Slot) spreadrules.Decision {
		return spreadrules.Release(slots, pod.Name, m.Subset)
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
func specOrderSlots(ws *appsv1alpha1.WorkloadSpread) []spreadrules.Slot {
	marked := map[string]bool{}
	for _, s := range spreadrules.SlotsFrom(ws.Spec.Subsets, ws.Status.SubsetStatuses) {
		marked[s.Name] = s.Unschedulable
	}
	out := make([]spreadrules.Slot, 0, len(ws.Spec.Subsets))
	for _, s := range ws.Spec.Subsets {
		out = append(out, spreadrules.Slot{Name: s.Name, MaxReplicas: s.MaxReplicas, Unschedulable: marked[s.Name]})
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
