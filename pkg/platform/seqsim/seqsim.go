package seqsim

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Environment variables that change which seeds every sequence of a test binary runs.
const (
	// SeedEnv set to n runs seed n alone, listed or not: the rerun of a failure.
	SeedEnv = "SEQSIM_SEED"
	// SeedsEnv set to n runs n seeds from each sequence's first instead of its count: a longer soak.
	SeedsEnv = "SEQSIM_SEEDS"
)

// stream is the PCG stream of every history's random source; the seed alone picks the history.
const stream = 7

// logTail is how many of the last log entries a failure prints.
const logTail = 80

// Seeds are the seeds a sequence runs: Count seeds from First.
type Seeds struct{ First, Count uint64 }

// Tick is how far the clock advances at a step, drawn from the history's random source if it
// likes.
type Tick func(*rand.Rand) time.Duration

// Every advances the clock by d at every step.
func Every(d time.Duration) Tick { return func(*rand.Rand) time.Duration { return d } }

// Seconds advances the clock by a whole number of seconds from lo to hi, drawn at every step.
func Seconds(lo, hi int) Tick {
	return func(r *rand.Rand) time.Duration { return time.Duration(lo+r.IntN(hi-lo+1)) * time.Second }
}

// Sequence is a seeded sequence test: which seeds run, and the clock of each history.
type Sequence struct {
	Seeds Seeds
	// Start is the clock before the first step.
	Start time.Time
	// Tick advances the clock at the start of every step; nil leaves it standing.
	Tick Tick
}

// Run runs history once per seed, each in a subtest named seed-<n> with a History of its own. The
// first seed that fails ends the run: its log is the one to read.
func (s Sequence) Run(t *testing.T, history func(h *History)) {
	t.Helper()
	seeds, err := s.Seeds.chosen(os.Getenv(SeedEnv), os.Getenv(SeedsEnv))
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range seeds {
		ok := t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			history(&History{t: t, seed: seed, rand: rand.New(rand.NewPCG(seed, stream)), start: s.Start,
				now: s.Start, tick: s.Tick, step: -1})
		})
		if !ok {
			return
		}
	}
}

// OwnSeeds reports whether the sequences run their own seeds: neither SeedEnv nor SeedsEnv is
// set. What all the histories of a sequence exercise together is a property of its own seeds.
func OwnSeeds() bool { return os.Getenv(SeedEnv) == "" && os.Getenv(SeedsEnv) == "" }

// chosen are the seeds to run, given the values of SeedEnv and SeedsEnv.
func (s Seeds) chosen(one, count string) ([]uint64, error) {
	if one != "" {
		seed, err := strconv.ParseUint(one, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", SeedEnv, one, err)
		}
		return []uint64{seed}, nil
	}
	n := s.Count
	if count != "" {
		var err error
		if n, err = strconv.ParseUint(count, 10, 64); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", SeedsEnv, count, err)
		}
	}
	seeds := make([]uint64, 0, n)
	for i := range n {
		seeds = append(seeds, s.First+i)
	}
	return seeds, nil
}

// History is one seeded run of a sequence: its random source, its clock, the step under way and
// its log.
type History struct {
	t          *testing.T
	seed       uint64
	rand       *rand.Rand
	start, now time.Time
	tick       Tick
	step       int
	log        []string
}

// Seed is the seed of the history.
func (h *History) Seed() uint64 { return h.seed }

// Rand is the history's random source: every random choice of the history comes from it, so the
// seed alone decides them.
func (h *History) Rand() *rand.Rand { return h.rand }

// Now is the history's clock.
func (h *History) Now() time.Time { return h.now }

// Step is the step under way, counted from 0 across calls of Steps (-1 before the first).
func (h *History) Step() int { return h.step }

// Steps runs at most n steps, each after the clock's tick, and reports whether one of them ended
// the history by returning true (it converged, or has nothing left to do); the step count and the
// clock go on from there in the next call.
func (h *History) Steps(n int, step func() bool) bool {
	for range n {
		h.step++
		if h.tick != nil {
			h.now = h.now.Add(h.tick(h.rand))
		}
		if step() {
			return true
		}
	}
	return false
}

// Logf adds an entry to the history's log, stamped with the step and the time since the start;
// the log is printed only when the history fails.
func (h *History) Logf(format string, args ...any) {
	h.log = append(h.log, h.stamp()+": "+fmt.Sprintf(format, args...))
}

// stamp is the step under way ("start" before the first) and, on a clock that ticks, the time
// since the start.
func (h *History) stamp() string {
	switch {
	case h.step < 0:
		return "start"
	case h.tick == nil:
		return fmt.Sprintf("step %d", h.step)
	default:
		return fmt.Sprintf("step %d +%s", h.step, h.now.Sub(h.start))
	}
}

// Fatalf fails the history with the message, the seed, the step, how to run it again and the
// end of its log.
func (h *History) Fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatal(h.report(fmt.Sprintf(format, args...)))
}

// report is what a failure of the history prints.
func (h *History) report(msg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %s: %s\n", h.seed, h.stamp(), msg)
	fmt.Fprintf(&b, "run it again: %s=%d go test -count=1 -run '%s' <package>\n", SeedEnv, h.seed, runPattern(h.t.Name()))
	tail := h.log[max(0, len(h.log)-logTail):]
	fmt.Fprintf(&b, "log (last %d of %d entries):\n", len(tail), len(h.log))
	for _, e := range tail {
		b.WriteString("  " + e + "\n")
	}
	return b.String()
}

// runPattern is the -run pattern that selects the test named name alone.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
