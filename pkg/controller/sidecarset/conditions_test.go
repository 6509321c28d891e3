package sidecarset

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/sidecarset"
)

// The InjectionRegistered condition follows the registrar's annotations: True once the current
// generation is registered, False with the registrar's reason while it cannot be, Unknown while
// it is being registered; its transition time moves only when its status does.
func TestWithRegistration(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	set := func(gen int64, annotations map[string]string) *v1beta1.SidecarSet {
		return &v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Generation: gen, Annotations: annotations}}
	}
	cases := []struct {
		name   string
		set    *v1beta1.SidecarSet
		status metav1.ConditionStatus
		reason string
	}{
		{"registered", set(2, map[string]string{sidecarset.RegisteredAnnotation: "2"}), metav1.ConditionTrue, ReasonRegistered},
		{"an older generation registered", set(3, map[string]string{sidecarset.RegisteredAnnotation: "2"}), metav1.ConditionUnknown, ReasonRegistering},
		{"never registered", set(1, nil), metav1.ConditionUnknown, ReasonRegistering},
		{"cannot be written", set(3, map[string]string{sidecarset.RegisteredAnnotation: "2",
			sidecarset.NotRegisteredAnnotation: "the configuration is missing"}), metav1.ConditionFalse, ReasonNotRegistered},
		{"paused", set(3, map[string]string{sidecarset.RegisteredAnnotation: "3",
			sidecarset.NotRegisteredAnnotation: "injection is paused"}), metav1.ConditionFalse, ReasonNotRegistered},
	}
	for _, c := range cases {
		got := withRegistration(c.set, nil, t0)
		if len(got) != 1 || got[0].Status != c.status || got[0].Reason != c.reason || got[0].ObservedGeneration != c.set.Generation {
			t.Errorf("%s: %+v, want %s %s", c.name, got, c.status, c.reason)
		}
		if again := withRegistration(c.set, got, t1); again[0].LastTransitionTime != t0 {
			t.Errorf("%s: the transition time moved without a transition", c.name)
		}
	}
	registering := withRegistration(set(1, nil), nil, t0)
	if got := withRegistration(set(1, map[string]string{sidecarset.RegisteredAnnotation: "1"}), registering, t1); got[0].LastTransitionTime != t1 {
		t.Errorf("registered after registering: transition at %v, want %v", got[0].LastTransitionTime, t1)
	}
}
