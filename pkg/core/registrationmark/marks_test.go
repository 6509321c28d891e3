package registrationmark

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func object(gen int64, annotations map[string]string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: "o", Namespace: "ns", Generation: gen, Annotations: annotations}
}

// A registration condition follows the registrar's marks: True once the current generation is
// registered, False with the registrar's reason while it cannot be (or needs no entry), Unknown
// while it is being registered; its transition time moves only when its status does.
func TestWith(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	k := Entries
	cases := []struct {
		name   string
		obj    *metav1.ObjectMeta
		status metav1.ConditionStatus
		reason string
	}{
		{"registered", object(2, map[string]string{k.Registered: "2"}), metav1.ConditionTrue, ReasonRegistered},
		{"an older generation registered", object(3, map[string]string{k.Registered: "2"}), metav1.ConditionUnknown, ReasonRegistering},
		{"never registered", object(1, nil), metav1.ConditionUnknown, ReasonRegistering},
		{"cannot be written", object(3, map[string]string{k.Registered: "2", k.NotRegistered: "the configuration is missing"}),
			metav1.ConditionFalse, ReasonNotRegistered},
		{"needs no entry", object(3, map[string]string{k.Registered: "3", k.NotRegistered: "it names no topology"}),
			metav1.ConditionFalse, ReasonNotRegistered},
	}
	for _, kind := range []Condition{SidecarSetInjection, BudgetProtection, SpreadPlacement, PersistentPodStateInjection} {
		for _, c := range cases {
			got := k.With(kind, c.obj, nil, t0)
			if len(got) != 1 || got[0].Type != kind.Type || got[0].Status != c.status || got[0].Reason != c.reason ||
				got[0].ObservedGeneration != c.obj.Generation || strings.Contains(got[0].Message, "%!") {
				t.Errorf("%s %s: %+v, want %s %s", kind.Type, c.name, got, c.status, c.reason)
			}
			if why := c.obj.Annotations[k.NotRegistered]; why != "" && !strings.Contains(got[0].Message, why) {
				t.Errorf("%s %s: message %q does not say why", kind.Type, c.name, got[0].Message)
			}
			if again := k.With(kind, c.obj, got, t1); again[0].LastTransitionTime != t0 {
				t.Errorf("%s %s: the transition time moved without a transition", kind.Type, c.name)
			}
		}
	}
	registering := k.With(BudgetProtection, object(1, nil), nil, t0)
	if got := k.With(BudgetProtection, object(1, map[string]string{k.Registered: "1"}), registering, t1); got[0].LastTransitionTime != t1 {
		t.Errorf("registered after registering: transition at %v, want %v", got[0].LastTransitionTime, t1)
	}
}

// The marks change only when the state does; a generation once registered stays registered when
// a later write fails; a reason is bounded.
func TestPatch(t *testing.T) {
	k := Entries
	annotations := func(patch []byte) map[string]any {
		var p struct {
			Metadata struct {
				Annotations map[string]any `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(patch, &p); err != nil {
			t.Fatal(err)
		}
		return p.Metadata.Annotations
	}
	if p := k.Patch(object(2, map[string]string{k.Registered: "2"}), true, ""); p != nil {
		t.Errorf("registered again: patch %s", p)
	}
	if p := k.Patch(object(2, map[string]string{k.Registered: "2"}), false, "cannot write"); p != nil {
		t.Errorf("a failure after the registration: patch %s", p)
	}
	a := annotations(k.Patch(object(3, map[string]string{k.Registered: "2"}), false, "cannot write"))
	if a[k.NotRegistered] != "cannot write" || a[k.Registered] != nil {
		t.Errorf("not registered: %v", a)
	}
	a = annotations(k.Patch(object(3, map[string]string{k.Registered: "2", k.NotRegistered: "cannot write"}), true, ""))
	if a[k.Registered] != "3" || a[k.NotRegistered] != nil {
		t.Errorf("registered: %v", a)
	}
	if _, set := a[k.NotRegistered]; !set {
		t.Error("the reason is not removed")
	}
	a = annotations(k.Patch(object(3, nil), false, strings.Repeat("x", 10*MaxReason)))
	if why, _ := a[k.NotRegistered].(string); len(why) > MaxReason+len("…") {
		t.Errorf("reason of %d bytes", len(why))
	}
}
