package advancedcronjob

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Event reasons of the controller's decisions.
const (
	ReasonSuccessfulCreate   = "SuccessfulCreate"
	ReasonSuccessfulDelete   = "SuccessfulDelete"
	ReasonFailedCreate       = "FailedCreate"
	ReasonJobAlreadyActive   = "JobAlreadyActive"
	ReasonMissSchedule       = "MissSchedule"
	ReasonTooManyMissedTimes = "TooManyMissedTimes"
	ReasonInvalidTemplate    = "InvalidTemplate"
)

// nextTickDelta is added to the wait for the next tick, so the reconcile it triggers lands just
// after the tick rather than a hair before it (Kubernetes' CronJob waits the same 100ms).
const nextTickDelta = 100 * time.Millisecond

// Plan is one reconcile's decisions for a cron job.
type Plan struct {
	// Delete are children to delete, oldest first, each with its reason.
	Delete []Deletion
	// Run is the tick to start a child for now; zero when none.
	Run time.Time
	// Events tell the user about the decisions that create or delete nothing.
	Events []Event
	// Next is the schedule's next tick; zero when it never fires again or is not read.
	Next time.Time
	// RequeueAfter is how long until the schedule needs another look; zero when only a change
	// of the cron job or its children does (paused, or a schedule that cannot be read).
	RequeueAfter time.Duration
}

// Deletion is a child to delete and why.
type Deletion struct {
	Child  child
	Reason string
}

// Event is a message for the user about the cron job.
type Event struct {
	Type, Reason, Note string
}

// options are the controller's settings a plan depends on.
type options struct {
	// Location is the zone a schedule without timeZone is read in (the manager's zone).
	Location *time.Location
}

// plan decides, from s at now: which finished children history limits drop, and whether a
// tick is due — the most recent tick after the last run (and within startingDeadlineSeconds),
// even after more than maxMissed missed ticks — and what concurrencyPolicy says about it.
func plan(s *snapshot, now time.Time, o options) *Plan {
	p := &Plan{Delete: planHistory(s)}
	spec := &s.ACJ.Spec
	if s.TemplateErr != nil {
		p.event(corev1.EventTypeWarning, ReasonInvalidTemplate, s.TemplateErr.Error())
		return p
	}
	if spec.Paused != nil && *spec.Paused {
		return p
	}
	sched, err := parseSchedule(spec.Schedule, spec.TimeZone, o.Location)
	if err != nil {
		reason := ReasonUnparseableSchedule
		if se := (*scheduleError)(nil); errors.As(err, &se) {
			reason = se.Reason
		}
		p.event(corev1.EventTypeWarning, reason, err.Error())
		return p
	}
	earliest := lastScheduled(s)
	if earliest.IsZero() {
		earliest = s.ACJ.CreationTimestamp.Time
	}
	if sds := spec.StartingDeadlineSeconds; sds != nil {
		if floor := now.Add(-time.Duration(*sds) * time.Second); floor.After(earliest) {
			earliest = floor
		}
	}
	tk := scheduleTicks(sched, earliest, now)
	p.Next = tk.Next
	if !tk.Next.IsZero() {
		p.RequeueAfter = tk.Next.Sub(now) + nextTickDelta
	}
	if tk.Last.IsZero() {
		return p
	}
	if tk.Missed > maxMissed {
		p.event(corev1.EventTypeWarning, ReasonTooManyMissedTimes, fmt.Sprintf(
			"more than %d start times were missed; starting the most recent one, %s (check clock skew, or set startingDeadlineSeconds)",
			maxMissed, tk.Last.Format(time.RFC3339)))
	}
	if sds := spec.StartingDeadlineSeconds; sds != nil && tk.Last.Add(time.Duration(*sds)*time.Second).Before(now) {
		p.event(corev1.EventTypeWarning, ReasonMissSchedule, "missed the start time "+tk.Last.Format(time.RFC3339)+": past startingDeadlineSeconds")
		return p
	}
	planRun(s, p, tk.Last, now)
	return p
}

// planRun applies concurrencyPolicy to the tick at: Forbid waits while a child runs (the tick
// stays due until it passes startingDeadlineSeconds), Replace deletes the running children
// first, Allow runs alongside them. Forbid and Replace also wait for the cache to show the last
// child this manager created, which they would otherwise miss.
func planRun(s *snapshot, p *Plan, at, now time.Time) {
	name := ChildName(s.ACJ.Name, at)
	var active []child
	for _, c := range s.Children {
		if c.Name == name {
			return // already created; the status takes its tick from it
		}
		if c.State == childActive && !c.Deleting {
			active = append(active, c)
		}
	}
	policy := s.ACJ.Spec.ConcurrencyPolicy
	if wait := s.PendingUntil.Sub(now); wait > 0 && policy != v1beta1.AdvancedCronJobAllowConcurrent {
		// The last child created is not in the cache yet and may still run: its arrival
		// reconciles again, or the wait ends.
		if p.RequeueAfter == 0 || wait < p.RequeueAfter {
			p.RequeueAfter = wait
		}
		return
	}
	switch policy {
	case v1beta1.AdvancedCronJobForbidConcurrent:
		if len(active) > 0 {
			p.event(corev1.EventTypeNormal, ReasonJobAlreadyActive, fmt.Sprintf(
				"not starting the run of %s: %d job(s) still running and concurrencyPolicy is Forbid", at.Format(time.RFC3339), len(active)))
			return
		}
	case v1beta1.AdvancedCronJobReplaceConcurrent:
		for _, c := range active {
			p.Delete = append(p.Delete, Deletion{Child: c, Reason: "replaced by the run of " + at.Format(time.RFC3339) + " (concurrencyPolicy Replace)"})
		}
	}
	p.Run = at
}

// planHistory drops the oldest finished children beyond successfulJobsHistoryLimit and
// failedJobsHistoryLimit (unset: no limit); running children are never dropped.
func planHistory(s *snapshot) []Deletion {
	var out []Deletion
	for _, h := range []struct {
		state childState
		limit *int32
		what  string
	}{
		{childSucceeded, s.ACJ.Spec.SuccessfulJobsHistoryLimit, "successfulJobsHistoryLimit"},
		{childFailed, s.ACJ.Spec.FailedJobsHistoryLimit, "failedJobsHistoryLimit"},
	} {
		if h.limit == nil {
			continue
		}
		var done []child
		for _, c := range s.Children {
			if c.State == h.state && !c.Deleting {
				done = append(done, c)
			}
		}
		slices.SortFunc(done, olderFirst)
		for i := 0; i < len(done)-int(max(*h.limit, 0)); i++ {
			out = append(out, Deletion{Child: done[i], Reason: fmt.Sprintf("beyond %s %d", h.what, *h.limit)})
		}
	}
	return out
}

// olderFirst orders children by start time (not started first), then tick, then name.
func olderFirst(a, b child) int {
	if c := cmpTime(a.StartTime, b.StartTime); c != 0 {
		return c
	}
	if c := cmpTime(a.ScheduledAt, b.ScheduledAt); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// cmpTime orders times, nil first.
func cmpTime(a, b *time.Time) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return a.Compare(*b)
}

func (p *Plan) event(typ, reason, note string) {
	p.Events = append(p.Events, Event{Type: typ, Reason: reason, Note: note})
}
