package cloneset

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/pkg/inplace"
)

func TestExpectationsWaitForTheCache(t *testing.T) {
	now := time.Unix(1000, 0)
	e := NewExpectations()
	e.ExpectCreate("ns/cs", "a", now)
	e.ExpectDelete("ns/cs", "b", now)
	e.ExpectUpdate("ns/cs", "c", "rev-2", now)
	pods := map[string]*corev1.Pod{
		"b": {ObjectMeta: metav1.ObjectMeta{Name: "b"}},
		"c": {ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{inplace.RevisionLabel: "rev-1"}}},
	}
	if !e.Pending("ns/cs", pods, now, time.Minute) {
		t.Fatal("a cache without the writes was trusted")
	}
	pods["a"] = &corev1.Pod{}
	delete(pods, "b")
	pods["c"].Labels[inplace.RevisionLabel] = "rev-2"
	if e.Pending("ns/cs", pods, now, time.Minute) {
		t.Fatal("a cache showing every write is still distrusted")
	}
	e.ExpectCreate("ns/cs", "d", now)
	e.ExpectCreate("ns/cs", "f", now)
	e.Drop("ns/cs", "d")
	if !e.Pending("ns/cs", pods, now, time.Minute) {
		t.Fatal("dropping one failed write dropped the others")
	}
	if e.Pending("ns/cs", pods, now.Add(2*time.Minute), time.Minute) {
		t.Fatal("an expectation outlived its timeout")
	}
}

func TestExpectOpenUntilTheCacheShowsIt(t *testing.T) {
	now := time.Now()
	e := NewExpectations()
	e.ExpectOpen("ns/cs", "p", now)
	closed := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}}}}
	if e.Pending("ns/cs", map[string]*corev1.Pod{"p": closed}, now, time.Minute) {
		t.Error("an opened gate holds the plan back")
	}
	if !e.Opening("ns/cs", "p") {
		t.Fatal("the gate is opened but the cache still shows it closed: it must not be opened again")
	}
	open := closed.DeepCopy()
	open.Status.Conditions[0].Status = corev1.ConditionTrue
	e.Pending("ns/cs", map[string]*corev1.Pod{"p": open}, now, time.Minute)
	if e.Opening("ns/cs", "p") {
		t.Error("the cache shows the gate open; the expectation must go")
	}
	e.ExpectOpen("ns/cs", "q", now)
	e.Pending("ns/cs", map[string]*corev1.Pod{"q": closed}, now.Add(2*time.Minute), time.Minute)
	if e.Opening("ns/cs", "q") {
		t.Error("an open expectation older than the timeout must go, so a lost write is retried")
	}
}
