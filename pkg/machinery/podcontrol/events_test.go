package podcontrol

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
)

func TestBatchMakesOneEventPerKindOfWrite(t *testing.T) {
	rec := events.NewFakeRecorder(20)
	var b Batch
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		b.Add("SuccessfulUpdatePodInPlace", "updated in place", p, "to revision r2: image changed")
	}
	b.Add("SuccessfulCreate", "created", "h", "revision r2: replicas 8 > 7 pods")
	b.Flush(rec, &corev1.Pod{})
	var got []string
	for len(rec.Events) > 0 {
		got = append(got, <-rec.Events)
	}
	want := []string{
		"Normal SuccessfulUpdatePodInPlace updated in place 7 pod(s) (a, b, c, d, e and 2 more): to revision r2: image changed",
		"Normal SuccessfulCreate created 1 pod(s) (h): revision r2: replicas 8 > 7 pods",
	}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %q, want %q", i, got[i], want[i])
		}
	}
}
