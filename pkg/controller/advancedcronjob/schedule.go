package advancedcronjob

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/kruise-ng/kruise/pkg/core/cronschedule"
)

// maxMissed is how many missed ticks a cron job may have before the controller warns about them
// (TooManyMissedTimes). Past it, the most recent tick still runs, as in Kubernetes' CronJob.
const maxMissed = 100

// scheduleError says why a cron job's schedule cannot be read; Reason is the event's reason.
type scheduleError struct {
	Reason  string
	Message string
}

func (e *scheduleError) Error() string { return e.Message }

// Event reasons of a schedule that cannot be read (Kubernetes' CronJob uses the same words).
const (
	ReasonUnparseableSchedule = "UnparseableSchedule"
	ReasonUnknownTimeZone     = "UnknownTimeZone"
)

// schedule is a parsed cron expression with the zone its fields are read in. Every time it
// returns is in that zone, so a child's scheduled-at annotation shows the schedule's wall clock.
type schedule struct {
	cron cron.Schedule
	loc  *time.Location
}

// next is the first tick strictly after t; zero when the schedule never fires again.
func (s schedule) next(t time.Time) time.Time {
	return s.cron.Next(t.In(s.loc))
}

// parseSchedule reads sched in the zone timeZone names, or in def when timeZone is nil. A zone
// prefix in sched wins over both (the webhook refuses a prefix together with timeZone).
func parseSchedule(sched string, timeZone *string, def *time.Location) (schedule, error) {
	loc := def
	if timeZone != nil && !cronschedule.HasZonePrefix(sched) {
		l, err := loadZone(*timeZone)
		if err != nil {
			return schedule{}, &scheduleError{Reason: ReasonUnknownTimeZone, Message: fmt.Sprintf("invalid timeZone %q: %v", *timeZone, err)}
		}
		loc = l
	}
	c, err := cronschedule.Parse(sched)
	if err != nil {
		return schedule{}, &scheduleError{Reason: ReasonUnparseableSchedule, Message: fmt.Sprintf("unparseable schedule %q: %v", sched, err)}
	}
	if spec, ok := c.(*cron.SpecSchedule); ok && spec.Location != time.Local {
		loc = spec.Location
	}
	return schedule{cron: c, loc: loc}, nil
}

// loadZone loads an IANA zone; "" and "Local" are refused, as Kubernetes refuses them.
func loadZone(name string) (*time.Location, error) {
	if name == "" || strings.EqualFold(name, "Local") {
		return nil, fmt.Errorf("an explicit IANA time zone is required")
	}
	return time.LoadLocation(name)
}

// ticks is what a schedule says about the window (earliest, now].
type ticks struct {
	// Last is the most recent tick in the window; zero when the window holds none.
	Last time.Time
	// Missed is how many ticks the window holds, counted up to maxMissed+1.
	Missed int
	// Next is the first tick after now (after earliest when that is later); zero when the
	// schedule never fires again.
	Next time.Time
}

// scheduleTicks finds the ticks of s in (earliest, now]. It steps through at most maxMissed+1
// ticks; past that it finds the most recent tick by searching back from now, so a cron job that
// was stopped for years costs no more than one that missed a few runs.
func scheduleTicks(s schedule, earliest, now time.Time) ticks {
	if earliest.After(now) {
		return ticks{Next: s.next(earliest)}
	}
	var out ticks
	t := s.next(earliest)
	for ; !t.IsZero() && !t.After(now); t = s.next(t) {
		out.Last = t
		out.Missed++
		if out.Missed > maxMissed {
			out.Last = lastTick(s, earliest, now)
			out.Next = s.next(now)
			return out
		}
	}
	out.Next = t
	return out
}

// lastTick is the most recent tick of s in (floor, now], known to exist: it looks in windows
// ending at now that double from a minute until one holds a tick.
func lastTick(s schedule, floor, now time.Time) time.Time {
	const maxSteps = 1 << 16 // a bound for pathological schedules, far above any real one
	steps := 0
	for window := time.Minute; ; window *= 2 {
		from := now.Add(-window)
		if !from.After(floor) {
			from = floor
		}
		var last time.Time
		for t := s.next(from); !t.IsZero() && !t.After(now) && steps < maxSteps; t = s.next(t) {
			last = t
			steps++
		}
		if !last.IsZero() || !from.After(floor) || steps >= maxSteps {
			return last
		}
	}
}
