package budgetguard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/podbudget"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/platform/liveread"
	"github.com/kruise-ng/kruise/pkg/platform/openkruisemetrics"
	"github.com/kruise-ng/kruise/pkg/webhook/livepod"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// +kubebuilder:rbac:groups=policy.kruise.io,resources=podunavailablebudgets,verbs=list;watch
// +kubebuilder:rbac:groups=policy.kruise.io,resources=podunavailablebudgets/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// DisruptionBudgetCause is the cause type of a refused eviction, as Kubernetes reports a
// PodDisruptionBudget's refusal.
const DisruptionBudgetCause metav1.CauseType = "DisruptionBudget"

// Handler answers the budget entries' calls.
type Handler struct {
	// Reader reads pods and budgets, normally from the cache; Live reads a budget afresh after a
	// conflicting status write, and a pod the cache does not hold as the request names it.
	Reader, Live client.Reader
	// Writer writes the budgets' status.
	Writer client.Client
	Finder *workloadfinder.Finder
	// Recorder receives an event on the pod of each refusal; nil drops them.
	Recorder events.EventRecorder
	Decoder  admission.Decoder
	Clock    clock.PassiveClock
	// Off are the operations not guarded (feature gates PodUnavailableBudgetDeleteGate for DELETE
	// and EVICT, PodUnavailableBudgetUpdateGate for UPDATE and RESIZE).
	Off map[policyv1alpha1.PubOperation]bool
	// ResizeIsUpdate counts a resize as an UPDATE for a budget whose kruise.io/pub-protect-operations
	// names UPDATE but not RESIZE, as OpenKruise does while the feature gate InPlacePodVerticalScaling
	// is off.
	ResizeIsUpdate bool

	locks   sync.Map // budget namespace/name → *sync.Mutex: one admission at a time per budget here
	written sync.Map // budget namespace/name → the *PodUnavailableBudget this handler last wrote
}

// Register serves h on srv under PathPrefix: PathPrefix + namespace [+ "/" + budget].
func Register(srv webhook.Server, scheme *runtime.Scheme, h *Handler) {
	if h.Decoder == nil {
		h.Decoder = admission.NewDecoder(scheme)
	}
	if h.Clock == nil {
		h.Clock = clock.RealClock{}
	}
	mount.Admission(srv, PathPrefix, h)
}

// RefusedReason is the reason of the Warning event on a pod whose disruption a budget refused,
// OpenKruise's.
const RefusedReason = "PubPreventPodDeletion"

// countRefusal counts a refused disruption of pod in OpenKruise's pod_unavailable_budget metric, by
// the pod's controller (kind "unknown" and the pod's name when none).
func countRefusal(pod *corev1.Pod, user string) {
	kind, name := "unknown", pod.Name
	if ref := metav1.GetControllerOf(pod); ref != nil {
		kind, name = ref.Kind, ref.Name
	}
	openkruisemetrics.BudgetRefused(kind, cmp.Or(pod.Namespace, metav1.NamespaceDefault), name, user)
}

// Handle answers one admission.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	pod, op, err := h.operation(ctx, req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if pod == nil || h.Off[op] {
		return admission.Allowed("")
	}
	path := mount.Suffix(ctx)
	_, name, _ := strings.Cut(path, "/")
	pub, err := h.budgetFor(ctx, pod, name)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if pub == nil {
		return admission.Allowed("no PodUnavailableBudget guards the pod")
	}
	op = h.asGuarded(pub, op)
	dec, err := h.admit(ctx, pub, pod, op, req.DryRun != nil && *req.DryRun)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if dec.Allowed {
		return admission.Allowed("")
	}
	if h.Recorder != nil {
		h.Recorder.Eventf(pod, pub, corev1.EventTypeWarning, RefusedReason, string(op), "%s refused: %s", op, dec.Reason)
	}
	countRefusal(pod, req.UserInfo.Username)
	msg := fmt.Sprintf("%s of pod %s/%s refused: %s", op, pod.Namespace, pod.Name, dec.Reason)
	if op == policyv1alpha1.PubEvictOperation {
		// 429 without Retry-After, as Kubernetes answers for a PodDisruptionBudget: eviction clients
		// (kubectl drain) retry on their own; a Retry-After would make client-go retry inside the call.
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests,
			Message: msg + "; retry later", Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{
				{Type: DisruptionBudgetCause, Message: fmt.Sprintf("The PodUnavailableBudget %q needs %d available pods", pub.Name, pub.Status.DesiredAvailable)}}}}}}
	}
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: msg}}}
}

// AdmitUpdate is the in-place engine's Budget (B2: budgets guard Kruise's own in-place updates):
// the budget that guards pod admits its update and records it, as an UPDATE through the webhook
// would be, before the engine takes the pod out of service.
func (h *Handler) AdmitUpdate(ctx context.Context, pod *corev1.Pod) (bool, string, error) {
	return h.admitOutOfBand(ctx, pod, false)
}

// AdmitRestart is the ContainerRecreateRequest admission's budget: a restart of pod's containers
// takes it out of service as an in-place update does, so the budget that guards pod admits it as
// an UPDATE and records it before the request is stored (a dry run records nothing). A pod
// already out of service, or in an in-place update the budget recorded (the in-place engine's own
// restarts), costs nothing.
func (h *Handler) AdmitRestart(ctx context.Context, pod *corev1.Pod, dryRun bool) (bool, string, error) {
	return h.admitOutOfBand(ctx, pod, dryRun)
}

// admitOutOfBand admits an UPDATE of pod that does not reach the pods' webhook as one.
func (h *Handler) admitOutOfBand(ctx context.Context, pod *corev1.Pod, dryRun bool) (bool, string, error) {
	if h.Off[policyv1alpha1.PubUpdateOperation] {
		return true, "", nil
	}
	pub, err := h.budgetFor(ctx, pod, "")
	if err != nil || pub == nil {
		return err == nil, "", err
	}
	dec, err := h.admit(ctx, pub, pod, policyv1alpha1.PubUpdateOperation, dryRun)
	return dec.Allowed, dec.Reason, err
}

// asGuarded is op as pub guards it: a resize counts as an UPDATE (recorded among the budget's
// unavailable pods) when ResizeIsUpdate and the budget guards UPDATE but not RESIZE.
func (h *Handler) asGuarded(pub *policyv1alpha1.PodUnavailableBudget, op policyv1alpha1.PubOperation) policyv1alpha1.PubOperation {
	if op == policyv1alpha1.PubResizeOperation && h.ResizeIsUpdate && !podbudget.Guards(pub, op) &&
		podbudget.Guards(pub, policyv1alpha1.PubUpdateOperation) {
		return policyv1alpha1.PubUpdateOperation
	}
	return op
}

// operation returns the pod an admission disrupts and how, or a nil pod when it disrupts none. The
// pod is the live one the request names (livepod: by UID, from the cache or the API server),
// never the request's oldObject: a request about a pod that does not exist, or exists under
// another UID, disrupts none. An update's new object is compared with the live pod.
func (h *Handler) operation(ctx context.Context, req admission.Request) (*corev1.Pod, policyv1alpha1.PubOperation, error) {
	var op policyv1alpha1.PubOperation
	switch {
	case req.Operation == admissionv1.Delete && req.SubResource == "":
		op = policyv1alpha1.PubDeleteOperation
	case req.Operation == admissionv1.Create && req.SubResource == "eviction":
		op = policyv1alpha1.PubEvictOperation
	case req.Operation == admissionv1.Update && req.SubResource == "resize":
		op = policyv1alpha1.PubResizeOperation
	case req.Operation == admissionv1.Update && req.SubResource == "":
		op = policyv1alpha1.PubUpdateOperation
	default:
		return nil, "", nil
	}
	want, err := livepod.Named(req.AdmissionRequest)
	if err != nil {
		return nil, "", err
	}
	pod, err := livepod.Finder{Cache: h.Reader, API: h.Live}.Get(ctx, want)
	if err != nil || pod == nil {
		return nil, "", err
	}
	if op == policyv1alpha1.PubUpdateOperation {
		updated := &corev1.Pod{}
		if err := h.Decoder.DecodeRaw(req.Object, updated); err != nil {
			return nil, "", err
		}
		if !podbudget.UpdateDisrupts(pod, updated) {
			return nil, "", nil
		}
	}
	return pod, op, nil
}

// budgetFor returns the budget that guards pod: the one named (a budget's entry called) if it
// selects the pod; else the one the pod's related-pub annotation names if it still does, else one
// of its namespace whose pods it is among. A budget the cache does not know yet is read from the
// API server (the named one, or the namespace's when the cache has none for the pod: the call came
// through the namespace's eviction entry, which the budget's admission may have registered
// moments ago): its entries were registered before it was stored.
func (h *Handler) budgetFor(ctx context.Context, pod *corev1.Pod, name string) (*policyv1alpha1.PodUnavailableBudget, error) {
	if name != "" {
		return h.selecting(ctx, pod, name)
	}
	if related := pod.Annotations[policyv1alpha1.PodRelatedPubAnnotation]; related != "" {
		// The annotation may name a budget since deleted or changed: then the pod's namespace decides.
		if pub, err := h.selecting(ctx, pod, related); err != nil || pub != nil {
			return pub, err
		}
	}
	pub, err := h.amongNamespace(ctx, h.Reader, pod)
	if pub != nil || err != nil || h.Live == nil {
		return pub, err
	}
	return h.amongNamespace(ctx, h.Live, pod)
}

// amongNamespace returns a budget of pod's namespace, as r lists them, whose pods pod is among.
func (h *Handler) amongNamespace(ctx context.Context, r client.Reader, pod *corev1.Pod) (*policyv1alpha1.PodUnavailableBudget, error) {
	list := &policyv1alpha1.PodUnavailableBudgetList{}
	if err := r.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		pub := &list.Items[i]
		sel, err := h.selector(ctx, pub)
		if err != nil {
			return nil, err
		}
		if sel != nil && sel.Matches(labels.Set(pod.Labels)) {
			return pub, nil
		}
	}
	return nil, nil
}

// selector is the selector of the pods pub guards, nil when none.
func (h *Handler) selector(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget) (labels.Selector, error) {
	b, err := BudgetOf(ctx, h.Finder, pub)
	if err != nil || b.Pods == nil {
		return nil, err
	}
	s, err := metav1.LabelSelectorAsSelector(b.Pods)
	if err != nil || s.Empty() {
		return nil, nil
	}
	return s, nil
}

// BudgetOf is pub as its entries need it: the pods it guards (podbudget.PodSelector, its
// targetRef read through finder; nil when it guards none), or that its target workload is not
// found.
func BudgetOf(ctx context.Context, finder *workloadfinder.Finder, pub *policyv1alpha1.PodUnavailableBudget) (Budget, error) {
	b := Budget{Namespace: pub.Namespace, Name: pub.Name}
	var target *metav1.LabelSelector
	if ref := pub.Spec.TargetReference; ref != nil {
		w, err := finder.Find(ctx, pub.Namespace, workloadfinder.Ref{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
		if err != nil {
			return b, err
		}
		if w != nil {
			target = w.LabelSelector
		}
		b.TargetMissing = w == nil
	}
	b.Pods = podbudget.PodSelector(pub, target)
	return b, nil
}

// admit decides under pub, recording an admitted disruption in its status with an optimistic write
// (retried on a conflict from a fresh read); a dry run records nothing.
func (h *Handler) admit(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget, pod *corev1.Pod,
	op policyv1alpha1.PubOperation, dryRun bool) (podbudget.Decision, error) {
	key := pub.Namespace + "/" + pub.Name
	mu, _ := h.locks.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	pub = pub.DeepCopy()
	if last, ok := h.written.Load(key); ok && newer(last.(*policyv1alpha1.PodUnavailableBudget), pub) {
		pub = last.(*policyv1alpha1.PodUnavailableBudget).DeepCopy() // the cache has not shown our last write yet
	}
	for attempt := 0; ; attempt++ {
		dec := podbudget.Admit(pub, pod, op, h.Clock.Now())
		if !dec.Record || dryRun {
			return dec, nil
		}
		err := h.Writer.Status().Update(ctx, pub)
		switch {
		case err == nil:
			h.written.Store(key, pub.DeepCopy())
			return dec, nil
		case apierrors.IsNotFound(err):
			return podbudget.Decision{Allowed: true}, nil
		case !apierrors.IsConflict(err) || attempt >= 4:
			return podbudget.Decision{}, fmt.Errorf("record the disruption in PodUnavailableBudget %s: %w", key, err)
		}
		fresh, err := h.live(ctx, pub.Namespace, pub.Name)
		if err != nil {
			return podbudget.Decision{}, err
		}
		if fresh == nil {
			return podbudget.Decision{Allowed: true}, nil // deleted meanwhile
		}
		pub = fresh
	}
}

// newer reports whether a's resourceVersion is later than b's (both are etcd revisions).
func newer(a, b *policyv1alpha1.PodUnavailableBudget) bool {
	x, errA := strconv.ParseInt(a.ResourceVersion, 10, 64)
	y, errB := strconv.ParseInt(b.ResourceVersion, 10, 64)
	return errA == nil && errB == nil && x > y
}

// selecting is budget name of pod's namespace if it exists and selects pod, else nil. An entry
// may be wider than its budget (its target workload missing, or an admission's entry for a spec
// not stored): only the pods the budget selects are guarded.
func (h *Handler) selecting(ctx context.Context, pod *corev1.Pod, name string) (*policyv1alpha1.PodUnavailableBudget, error) {
	pub, err := h.named(ctx, pod.Namespace, name)
	if err != nil || pub == nil {
		return nil, err
	}
	sel, err := h.selector(ctx, pub)
	if err != nil || sel == nil || !sel.Matches(labels.Set(pod.Labels)) {
		return nil, err
	}
	return pub, nil
}

// named reads budget name of namespace from the cache, or from the API server when the cache does
// not know it yet; nil when it does not exist.
func (h *Handler) named(ctx context.Context, namespace, name string) (*policyv1alpha1.PodUnavailableBudget, error) {
	pub := &policyv1alpha1.PodUnavailableBudget{}
	switch err := h.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pub); {
	case err == nil:
		return pub, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	case h.Live == nil:
		return nil, nil
	}
	return h.live(ctx, namespace, name)
}

// live reads budget name of namespace from the API server (by a list by name: list and watch are
// all the manager may do with budgets); nil when it does not exist.
func (h *Handler) live(ctx context.Context, namespace, name string) (*policyv1alpha1.PodUnavailableBudget, error) {
	pub, _, err := liveread.ByName[*policyv1alpha1.PodUnavailableBudget](ctx, h.Live, &policyv1alpha1.PodUnavailableBudgetList{}, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("read PodUnavailableBudget %s/%s: %w", namespace, name, err)
	}
	return pub, nil
}
