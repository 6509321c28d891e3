package registrationmark

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
)

// Keys are the annotations of one kind's marks.
type Keys struct {
	// Registered is the generation whose entries the API server has (or, when that generation
	// needs none, whose absence of entries it has): from the moment it shows a generation, every
	// request that generation's entries select reaches Kruise, or is refused while Kruise cannot
	// be reached.
	Registered string
	// NotRegistered says why the current generation has no entry (absent otherwise).
	NotRegistered string
}

// Entries are the keys on PodUnavailableBudgets, WorkloadSpreads and PersistentPodStates (Kruise's
// own, not in OpenKruise; SidecarSets have theirs, pkg/core/sidecarrules).
var Entries = Keys{
	Registered:    "apps.kruise.io/webhook-registered-generation",
	NotRegistered: "apps.kruise.io/webhook-not-registered",
}

// MaxReason bounds the reason a mark carries.
const MaxReason = 512

// Patch is the merge patch that marks obj with the state of its current generation's
// registration — registered: the API server has it (why, if set, says why that generation needs
// no entry); otherwise why says what keeps it from being registered — or nil when obj already
// carries those marks. A generation marked registered stays so: a later write failing takes
// nothing from it.
func (k Keys) Patch(obj metav1.Object, registered bool, why string) []byte {
	if len(why) > MaxReason {
		why = why[:MaxReason] + "…"
	}
	gen := strconv.FormatInt(obj.GetGeneration(), 10)
	have := obj.GetAnnotations()[k.Registered]
	if (have == gen) == registered && obj.GetAnnotations()[k.NotRegistered] == why {
		return nil
	}
	if !registered && have == gen {
		return nil
	}
	annotations := map[string]any{k.NotRegistered: nil}
	if why != "" {
		annotations[k.NotRegistered] = why
	}
	if registered {
		annotations[k.Registered] = gen
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}}) // cannot fail: strings only
	return patch
}

// Reasons of a registration condition.
const (
	ReasonRegistered    = "Registered"
	ReasonNotRegistered = "NotRegistered"
	ReasonRegistering   = "Registering"
)

// Condition is one kind's registration condition: its type and what its True and False
// messages say, each given the generation (and, for False, why) as %s.
type Condition struct {
	Type       string
	Registered string
	// NotRegistered takes the generation, then why.
	NotRegistered string
}

// With returns conds with c's condition for obj, read from k's marks: True once its current
// generation is registered, False with the registrar's reason while it is not, Unknown while it
// is being registered; the transition time moves only when the status does.
func (k Keys) With(c Condition, obj metav1.Object, conds []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := append([]metav1.Condition(nil), conds...)
	gen := strconv.FormatInt(obj.GetGeneration(), 10)
	cond := metav1.Condition{Type: c.Type, ObservedGeneration: obj.GetGeneration(), LastTransitionTime: now}
	why, hasWhy := obj.GetAnnotations()[k.NotRegistered]
	switch registered := obj.GetAnnotations()[k.Registered] == gen; {
	case hasWhy:
		cond.Status, cond.Reason = metav1.ConditionFalse, ReasonNotRegistered
		cond.Message = fmt.Sprintf(c.NotRegistered, gen, why)
	case registered:
		cond.Status, cond.Reason = metav1.ConditionTrue, ReasonRegistered
		cond.Message = fmt.Sprintf(c.Registered, gen)
	default:
		cond.Status, cond.Reason = metav1.ConditionUnknown, ReasonRegistering
		cond.Message = fmt.Sprintf("generation %s is being registered", gen)
	}
	meta.SetStatusCondition(&out, cond)
	return out
}

// The registration conditions of the kinds with entries of their own.
var (
	SidecarSetInjection = Condition{Type: v1beta1.SidecarSetInjectionRegistered,
		Registered:    "the API server sends the pods generation %s selects to Kruise for injection",
		NotRegistered: "pods generation %s selects are not sent to Kruise: %s"}
	BudgetProtection = Condition{Type: policyv1alpha1.PodUnavailableBudgetProtectionRegistered,
		Registered:    "the API server sends the evictions, deletions and updates of the pods generation %s guards to Kruise",
		NotRegistered: "disruptions of the pods generation %s guards are not sent to Kruise, so not held to the budget: %s"}
	SpreadPlacement = Condition{Type: appsv1alpha1.WorkloadSpreadPlacementRegistered,
		Registered:    "the API server sends the creations of the pods generation %s places to Kruise",
		NotRegistered: "pods generation %s places are created without being placed: %s"}
	PersistentPodStateInjection = Condition{Type: appsv1alpha1.PersistentPodStateInjectionRegistered,
		Registered:    "the API server sends the creations of the pods generation %s keeps the state of to Kruise",
		NotRegistered: "pods generation %s keeps the state of are created without their recorded topology: %s"}
)
