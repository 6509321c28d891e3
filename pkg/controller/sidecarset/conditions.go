package sidecarset

import (
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/sidecarset"
)

// Reasons of the InjectionRegistered condition.
const (
	ReasonRegistered    = "Registered"
	ReasonNotRegistered = "NotRegistered"
	ReasonRegistering   = "Registering"
)

// withRegistration returns conds with the InjectionRegistered condition of set, read from the
// injection registrar's annotations (sidecarset.RegisteredAnnotation, NotRegisteredAnnotation).
func withRegistration(set *v1beta1.SidecarSet, conds []metav1.Condition, now metav1.Time) []metav1.Condition {
	out := slices.Clone(conds)
	gen := strconv.FormatInt(set.Generation, 10)
	c := metav1.Condition{Type: v1beta1.SidecarSetInjectionRegistered, ObservedGeneration: set.Generation, LastTransitionTime: now}
	why, hasWhy := set.Annotations[sidecarset.NotRegisteredAnnotation]
	switch registered := set.Annotations[sidecarset.RegisteredAnnotation] == gen; {
	case hasWhy:
		c.Status, c.Reason = metav1.ConditionFalse, ReasonNotRegistered
		c.Message = fmt.Sprintf("pods generation %s selects are not sent to Kruise: %s", gen, why)
	case registered:
		c.Status, c.Reason = metav1.ConditionTrue, ReasonRegistered
		c.Message = fmt.Sprintf("the API server sends the pods generation %s selects to Kruise for injection", gen)
	default:
		c.Status, c.Reason = metav1.ConditionUnknown, ReasonRegistering
		c.Message = fmt.Sprintf("generation %s is being registered", gen)
	}
	meta.SetStatusCondition(&out, c)
	return out
}
