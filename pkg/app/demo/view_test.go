package demo

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		done, total int
		want        string
	}{
		{0, 50, "[....................]   0%"},
		{5, 50, "[##..................]  10%"},
		{50, 50, "[####################] 100%"},
		{60, 50, "[####################] 100%"},
		{1, 0, "[####################] 100%"},
	} {
		if got := bar(tc.done, tc.total, 20); got != tc.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

// Off a terminal the view prints the header once, then a line per change (the clock moving is no
// change); on a terminal it redraws one line and ends a phase with a newline.
func TestView(t *testing.T) {
	var out bytes.Buffer
	v := newView(&out, false)
	v.show("canary [..] 1/5   1.0s")
	v.show("canary [..] 2/5   1.5s") // a change, but within the second
	v.lastPrint = time.Time{}        // as if a second had passed
	v.show("canary [..] 2/5   2.0s")
	v.lastPrint = time.Time{}
	v.show("canary [..] 2/5   3.0s") // only the clock moved
	v.done("canary [..] 5/5   4.0s")
	want := header + "\ncanary [..] 1/5   1.0s\ncanary [..] 2/5   2.0s\ncanary [..] 5/5   4.0s\n"
	if out.String() != want {
		t.Errorf("log view printed\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	v = newView(&out, true)
	v.show("a 1.0s")
	v.done("a 2.0s")
	if want := header + "\n\r\033[Ka 1.0s\r\033[Ka 2.0s\n"; out.String() != want {
		t.Errorf("live view printed %q, want %q", out.String(), want)
	}
}

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	(&Summary{Replicas: 50, Canary: 45, MaxUnavailable: "20%", Images: [2]string{"demo:v1", "demo:v2"},
		InPlace: 50, Restarts: 50, MinEndpoints: 40, Endpoints: 50}).Write(&out)
	for _, want := range []string{"50 of 50 pods updated in place, 0 recreated", "canary (5 pods, partition 45)",
		"the rest (45 pods, maxUnavailable 20%)", "0 (every pod is the same pod object", "50 (one per pod", "40 of 50 at the fewest"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	(&Summary{Replicas: 2, Canary: 1, Images: [2]string{"a", "b"}, InPlace: 1, Recreated: 1, Restarts: 1}).Write(&out)
	if strings.Contains(out.String(), "same pod object") || strings.Contains(out.String(), "one per pod") {
		t.Errorf("a summary with a recreated pod claims none:\n%s", out.String())
	}
}
