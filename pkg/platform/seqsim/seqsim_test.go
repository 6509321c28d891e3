package seqsim

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChosenSeeds(t *testing.T) {
	s := Seeds{First: 5, Count: 3}
	for _, c := range []struct {
		one, count string
		want       []uint64
	}{
		{"", "", []uint64{5, 6, 7}},
		{"42", "", []uint64{42}},
		{"42", "10", []uint64{42}},
		{"", "5", []uint64{5, 6, 7, 8, 9}},
		{"", "0", []uint64{}},
	} {
		got, err := s.chosen(c.one, c.count)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("chosen(%q, %q) = %v, %v; want %v", c.one, c.count, got, err, c.want)
		}
	}
	if _, err := s.chosen("x", ""); err == nil || !strings.Contains(err.Error(), SeedEnv) {
		t.Errorf("a bad %s: %v", SeedEnv, err)
	}
	if _, err := s.chosen("", "-1"); err == nil || !strings.Contains(err.Error(), SeedsEnv) {
		t.Errorf("a bad %s: %v", SeedsEnv, err)
	}
}

// The clock ticks before every step, the step count goes on across calls, and a step that ends
// the history stops the loop.
func TestSteps(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var steps []int
	var times []time.Duration
	Sequence{Seeds: Seeds{First: 1, Count: 1}, Start: start, Tick: Every(time.Second)}.Run(t, func(h *History) {
		record := func() { steps, times = append(steps, h.Step()), append(times, h.Now().Sub(start)) }
		if h.Step() != -1 || !h.Now().Equal(start) {
			t.Errorf("before the first step: step %d at %v", h.Step(), h.Now())
		}
		if h.Steps(3, func() bool { record(); return false }) {
			t.Error("Steps reported an end no step reported")
		}
		if !h.Steps(10, func() bool { record(); return h.Step() == 4 }) {
			t.Error("Steps missed the end step 4 reported")
		}
	})
	if !slices.Equal(steps, []int{0, 1, 2, 3, 4}) || !slices.Equal(times, []time.Duration{1e9, 2e9, 3e9, 4e9, 5e9}) {
		t.Errorf("steps %v at %v", steps, times)
	}
}

// A seed decides the history: the same seed draws the same ticks, another seed others.
func TestSeedDecides(t *testing.T) {
	draw := func(seeds Seeds) [][]time.Duration {
		var out [][]time.Duration
		Sequence{Seeds: seeds, Tick: Seconds(0, 1000)}.Run(t, func(h *History) {
			var ticks []time.Duration
			last := h.Now()
			h.Steps(20, func() bool { ticks = append(ticks, h.Now().Sub(last)); last = h.Now(); return false })
			out = append(out, ticks)
		})
		return out
	}
	a, b := draw(Seeds{First: 3, Count: 2}), draw(Seeds{First: 3, Count: 1})
	if !slices.Equal(a[0], b[0]) || slices.Equal(a[0], a[1]) {
		t.Errorf("seed 3 drew %v then %v; seed 4 drew %v", a[0], b[0], a[1])
	}
	for _, d := range a[0] {
		if d < 0 || d > 1000*time.Second || d%time.Second != 0 {
			t.Errorf("Seconds(0, 1000) ticked %v", d)
		}
	}
}

// A failure names the seed and the step, says how to run the history again and shows the end of
// its log.
func TestReport(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := &History{t: t, seed: 17, start: start, now: start, tick: Every(time.Minute), step: -1}
	h.Logf("set up")
	h.Steps(logTail+5, func() bool { h.Logf("entry %d", h.Step()); return false })
	got := h.report("boom")
	for _, want := range []string{
		"seed 17, step 84 +1h25m0s: boom\n",
		"SEQSIM_SEED=17 go test -count=1 -run '^TestReport$' <package>\n",
		"log (last 80 of 86 entries):\n",
		"  step 5 +6m0s: entry 5\n",
		"  step 84 +1h25m0s: entry 84\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "entry 4\n") || strings.Contains(got, "set up") {
		t.Errorf("report shows more than the last %d entries:\n%s", logTail, got)
	}
	still := &History{t: t, seed: 3, step: -1}
	still.Logf("set up")
	if got := still.report("early"); !strings.HasPrefix(got, "seed 3, start: early\n") || !strings.Contains(got, "  start: set up\n") {
		t.Errorf("a history failing before its first step reports:\n%s", got)
	}
	still.Steps(2, func() bool { still.Logf("x"); return false })
	if got := still.report("boom"); !strings.HasPrefix(got, "seed 3, step 1: boom\n") || !strings.Contains(got, "  step 0: x\n") {
		t.Errorf("a history whose clock stands reports:\n%s", got)
	}
}

func TestRunPattern(t *testing.T) {
	if got, want := runPattern("TestX/WhenScaled-custom=true/seed-3"), `^TestX$/^WhenScaled-custom=true$/^seed-3$`; got != want {
		t.Errorf("runPattern = %s, want %s", got, want)
	}
	if got, want := runPattern("TestX/a.b"), `^TestX$/^a\.b$`; got != want {
		t.Errorf("runPattern = %s, want %s", got, want)
	}
}
