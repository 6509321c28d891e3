package podcontrol

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Once the cache shows every write of a workload, nothing is kept for it: the maps a large
// scale-up grew are dropped, not kept empty.
func TestExpectationsDropWhatIsMet(t *testing.T) {
	e := NewExpectations()
	now := time.Now()
	e.ExpectCreate("ns/cs", "a", now)
	e.ExpectCreate("ns/cs", "b", now)
	e.ExpectOpen("ns/cs", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, now)
	pods := map[string]*corev1.Pod{"a": {ObjectMeta: metav1.ObjectMeta{Name: "a"}}}
	if wait, _ := e.Pending("ns/cs", pods, now, time.Minute, nil); !wait {
		t.Fatal("b is not in the cache yet: want to wait")
	}
	if _, ok := e.pending["ns/cs"]; !ok {
		t.Fatal("b's expectation was dropped")
	}
	pods["b"] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	if wait, _ := e.Pending("ns/cs", pods, now, time.Minute, nil); wait {
		t.Fatal("every create is in the cache: want no wait")
	}
	if _, ok := e.pending["ns/cs"]; ok {
		t.Error("the workload's met expectations are still kept")
	}
	if _, ok := e.opens["ns/cs"]; ok {
		t.Error("the workload's seen gate openings are still kept")
	}
}
