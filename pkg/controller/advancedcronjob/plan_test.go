package advancedcronjob

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// TestPlanSchedule: which tick runs, and when the controller looks again, for schedules,
// time zones, deadlines and missed runs.
func TestPlanSchedule(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	cases := []struct {
		name     string
		schedule string
		timeZone *string
		mutate   func(*v1beta1.AdvancedCronJob)
		now      string
		run      string // RFC 3339 with the zone the annotation shows; "" for none
		next     string
		events   []string
	}{
		{name: "the first tick after creation runs", schedule: "*/1 * * * *", now: "2025-03-10T10:01:05Z",
			run: "2025-03-10T10:01:00Z", next: "2025-03-10T10:02:00Z"},
		{name: "nothing is due before the first tick", schedule: "*/1 * * * *", now: "2025-03-10T10:00:50Z",
			next: "2025-03-10T10:01:00Z"},
		{name: "a tick exactly now runs", schedule: "*/5 * * * *", now: "2025-03-10T10:05:00Z",
			run: "2025-03-10T10:05:00Z", next: "2025-03-10T10:10:00Z"},
		{name: "only the most recent of a few missed ticks runs", schedule: "*/1 * * * *", now: "2025-03-10T10:07:30Z",
			run: "2025-03-10T10:07:00Z", next: "2025-03-10T10:08:00Z"},
		{name: "the tick after the last run", schedule: "*/1 * * * *", now: "2025-03-10T10:21:10Z",
			mutate: lastRun("2025-03-10T10:20:00Z"), run: "2025-03-10T10:21:00Z", next: "2025-03-10T10:22:00Z"},
		{name: "the last run's tick does not run again", schedule: "*/1 * * * *", now: "2025-03-10T10:20:59Z",
			mutate: lastRun("2025-03-10T10:20:00Z"), next: "2025-03-10T10:21:00Z"},
		{name: "a last run in the future holds the schedule until then", schedule: "*/1 * * * *", now: "2025-03-10T10:20:30Z",
			mutate: lastRun("2025-03-10T10:25:00Z"), next: "2025-03-10T10:26:00Z"},
		{name: "timeZone: 09:00 in Shanghai is 01:00 UTC", schedule: "0 9 * * *", timeZone: ptr.To("Asia/Shanghai"),
			mutate: lastRun("2025-03-10T01:00:00Z"), now: "2025-03-11T01:00:10Z", run: "2025-03-11T09:00:00+08:00", next: "2025-03-12T09:00:00+08:00"},
		{name: "without timeZone the manager's zone reads the schedule", schedule: "0 9 * * *",
			mutate: lastRun("2025-03-10T09:00:00Z"), now: "2025-03-11T01:00:10Z", next: "2025-03-11T09:00:00Z"},
		{name: "a CRON_TZ prefix names the schedule's zone", schedule: "CRON_TZ=Asia/Tokyo 0 9 * * *",
			mutate: lastRun("2025-03-10T01:00:00Z"), now: "2025-03-11T00:00:10Z", run: "2025-03-11T09:00:00+09:00", next: "2025-03-12T09:00:00+09:00"},
		{name: "timeZone across a DST change (New York springs forward on 2025-03-09)", schedule: "30 2 * * *", timeZone: ptr.To("America/New_York"),
			mutate: lastRun("2025-03-08T07:30:00Z"), now: "2025-03-10T07:31:00Z", run: "2025-03-10T02:30:00-04:00", next: "2025-03-11T02:30:00-04:00"},
		{name: "within startingDeadlineSeconds the tick runs", schedule: "*/1 * * * *", now: "2025-03-10T10:01:09Z",
			mutate: deadline(10), run: "2025-03-10T10:01:00Z", next: "2025-03-10T10:02:00Z"},
		{name: "past startingDeadlineSeconds the tick is skipped", schedule: "*/1 * * * *", now: "2025-03-10T10:01:11Z",
			mutate: deadline(10), next: "2025-03-10T10:02:00Z"},
		{name: "startingDeadlineSeconds bounds how far back missed ticks are looked for", schedule: "*/10 * * * *", now: "2025-03-10T12:05:00Z",
			mutate: deadline(600), run: "2025-03-10T12:00:00Z", next: "2025-03-10T12:10:00Z"},
		{name: "exactly 100 missed ticks: no warning", schedule: "*/1 * * * *", now: "2025-03-10T11:40:00Z",
			mutate: lastRun("2025-03-10T10:00:00Z"), run: "2025-03-10T11:40:00Z", next: "2025-03-10T11:41:00Z"},
		{name: "B3: more than 100 missed ticks still run the most recent one", schedule: "*/1 * * * *", now: "2025-03-10T13:00:42Z",
			mutate: lastRun("2025-03-10T10:00:00Z"), run: "2025-03-10T13:00:00Z", next: "2025-03-10T13:01:00Z", events: []string{ReasonTooManyMissedTimes}},
		{name: "B3: years of missed hourly ticks", schedule: "17 * * * *", now: "2025-03-10T13:16:00Z",
			mutate: lastRun("2019-01-01T00:00:00Z"), run: "2025-03-10T12:17:00Z", next: "2025-03-10T13:17:00Z", events: []string{ReasonTooManyMissedTimes}},
		{name: "B3: missed ticks of an uneven schedule", schedule: "0 9,17 * * 1-5", now: "2025-03-10T08:00:00Z",
			mutate: lastRun("2024-01-01T00:00:00Z"), run: "2025-03-07T17:00:00Z", next: "2025-03-10T09:00:00Z", events: []string{ReasonTooManyMissedTimes}},
		{name: "@every descriptor", schedule: "@every 90s", now: "2025-03-10T10:02:05Z",
			run: "2025-03-10T10:02:00Z", next: "2025-03-10T10:03:30Z"},
		{name: "an unparseable schedule is reported and not retried", schedule: "61 * * * *", now: "2025-03-10T10:02:05Z",
			events: []string{ReasonUnparseableSchedule}},
		{name: "a malformed zone prefix is reported, not a panic", schedule: "TZ=Asia/Tokyo", now: "2025-03-10T10:02:05Z",
			events: []string{ReasonUnparseableSchedule}},
		{name: "an unknown timeZone is reported and not retried", schedule: "*/1 * * * *", timeZone: ptr.To("Mars/Olympus_Mons"),
			now: "2025-03-10T10:02:05Z", events: []string{ReasonUnknownTimeZone}},
		{name: "a schedule that never fires", schedule: "0 0 30 2 *", now: "2025-03-10T10:02:05Z"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acj := newACJ(tc.schedule, created)
			acj.Spec.TimeZone = tc.timeZone
			if tc.mutate != nil {
				tc.mutate(acj)
			}
			clk := testingclock.NewFakePassiveClock(at(t, tc.now))
			p := plan(snap(acj), clk.Now(), utc)
			if got := fmtTime(p.Run); got != tc.run {
				t.Errorf("run %q, want %q", got, tc.run)
			}
			if got := fmtTime(p.Next); got != tc.next {
				t.Errorf("next %q, want %q", got, tc.next)
			}
			wantWait := time.Duration(0)
			if tc.next != "" {
				wantWait = at(t, tc.next).Sub(clk.Now()) + nextTickDelta
			}
			if p.RequeueAfter != wantWait {
				t.Errorf("requeue after %v, want %v", p.RequeueAfter, wantWait)
			}
			if got := reasons(p); !slices.Equal(got, tc.events) {
				t.Errorf("events %v (%+v), want %v", got, p.Events, tc.events)
			}
		})
	}
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

func lastRun(s string) func(*v1beta1.AdvancedCronJob) {
	return func(acj *v1beta1.AdvancedCronJob) {
		v, _ := time.Parse(time.RFC3339, s)
		acj.Status.LastScheduleTime = &metav1.Time{Time: v}
	}
}

func deadline(sec int64) func(*v1beta1.AdvancedCronJob) {
	return func(acj *v1beta1.AdvancedCronJob) { acj.Spec.StartingDeadlineSeconds = ptr.To(sec) }
}

// TestPlanConcurrency: what each concurrencyPolicy does with a due tick while children run.
func TestPlanConcurrency(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	now := at(t, "2025-03-10T10:02:05Z")
	prev := at(t, "2025-03-10T10:01:00Z")
	started := prev.Add(2 * time.Second)
	cases := []struct {
		name     string
		policy   v1beta1.AdvancedCronJobConcurrencyPolicy
		previous childState
		deleting bool
		run      bool
		deletes  []string
		events   []string
	}{
		{name: "Allow runs beside a running job", policy: v1beta1.AdvancedCronJobAllowConcurrent, previous: childActive, run: true},
		{name: "Forbid waits for a running job", policy: v1beta1.AdvancedCronJobForbidConcurrent, previous: childActive,
			events: []string{ReasonJobAlreadyActive}},
		{name: "Forbid runs once the job finished", policy: v1beta1.AdvancedCronJobForbidConcurrent, previous: childSucceeded, run: true},
		{name: "Forbid ignores a job being deleted", policy: v1beta1.AdvancedCronJobForbidConcurrent, previous: childActive, deleting: true, run: true},
		{name: "Replace deletes the running job first", policy: v1beta1.AdvancedCronJobReplaceConcurrent, previous: childActive, run: true,
			deletes: []string{"cj-1741600860"}},
		{name: "Replace leaves a failed job to the history limit", policy: v1beta1.AdvancedCronJobReplaceConcurrent, previous: childFailed, run: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acj := newACJ("*/1 * * * *", created)
			acj.Spec.ConcurrencyPolicy = tc.policy
			acj.Status.LastScheduleTime = &metav1.Time{Time: prev}
			c := kid(prev, tc.previous, &started)
			c.Deleting = tc.deleting
			p := plan(snap(acj, c), now, utc)
			if got := !p.Run.IsZero(); got != tc.run {
				t.Errorf("run %v, want %v", p.Run, tc.run)
			}
			if got := deleted(p); !slices.Equal(got, tc.deletes) {
				t.Errorf("deletes %v, want %v", got, tc.deletes)
			}
			if got := reasons(p); !slices.Equal(got, tc.events) {
				t.Errorf("events %v, want %v", got, tc.events)
			}
		})
	}
}

// TestPlanHistory: finished children beyond the limits go, oldest first; running ones stay.
func TestPlanHistory(t *testing.T) {
	created := at(t, "2025-03-10T09:00:30Z")
	tick := func(m int) time.Time { return at(t, "2025-03-10T10:00:00Z").Add(time.Duration(m) * time.Minute) }
	start := func(m int) *time.Time { v := tick(m).Add(time.Second); return &v }
	children := []child{
		kid(tick(3), childSucceeded, start(3)),
		kid(tick(1), childSucceeded, start(1)),
		kid(tick(2), childSucceeded, nil), // never started: oldest
		kid(tick(4), childFailed, start(4)),
		kid(tick(5), childFailed, start(5)),
		kid(tick(6), childActive, start(6)),
	}
	cases := []struct {
		name              string
		succeeded, failed *int32
		paused            bool
		want              []string
	}{
		{name: "limits keep the newest", succeeded: ptr.To[int32](1), failed: ptr.To[int32](1),
			want: []string{ChildName("cj", tick(2)), ChildName("cj", tick(1)), ChildName("cj", tick(4))}},
		{name: "limit 0 keeps no finished job", succeeded: ptr.To[int32](0), failed: ptr.To[int32](0),
			want: []string{ChildName("cj", tick(2)), ChildName("cj", tick(1)), ChildName("cj", tick(3)), ChildName("cj", tick(4)), ChildName("cj", tick(5))}},
		{name: "no limit keeps everything", want: nil},
		{name: "limits above the count keep everything", succeeded: ptr.To[int32](3), failed: ptr.To[int32](2), want: nil},
		{name: "a paused cron job still prunes", succeeded: ptr.To[int32](2), paused: true, want: []string{ChildName("cj", tick(2))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acj := newACJ("*/1 * * * *", created)
			acj.Spec.SuccessfulJobsHistoryLimit, acj.Spec.FailedJobsHistoryLimit = tc.succeeded, tc.failed
			acj.Spec.Paused = ptr.To(tc.paused)
			acj.Status.LastScheduleTime = &metav1.Time{Time: tick(6)}
			p := plan(snap(acj, children...), tick(6).Add(30*time.Second), utc)
			if got := deleted(p); !slices.Equal(got, tc.want) {
				t.Errorf("deletes %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPlanPausedAndTemplates: paused runs nothing and waits for a change; a template that is not
// exactly one kind is reported.
func TestPlanPausedAndTemplates(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	now := at(t, "2025-03-10T10:05:05Z")

	acj := newACJ("*/1 * * * *", created)
	acj.Spec.Paused = ptr.To(true)
	if p := plan(snap(acj), now, utc); !p.Run.IsZero() || p.RequeueAfter != 0 || len(p.Events) > 0 {
		t.Errorf("paused: %+v", p)
	}
	// Resumed: the most recent tick missed while paused runs at once.
	acj.Spec.Paused = ptr.To(false)
	if p := plan(snap(acj), now, utc); fmtTime(p.Run) != "2025-03-10T10:05:00Z" {
		t.Errorf("resumed: run %v", p.Run)
	}

	none := newACJ("*/1 * * * *", created)
	none.Spec.Template.JobTemplate = nil
	two := newACJ("*/1 * * * *", created)
	two.Spec.Template.BroadcastJobTemplate = &v1beta1.AdvancedCronJobBroadcastJobTemplate{}
	for _, acj := range []*v1beta1.AdvancedCronJob{none, two} {
		p := plan(snap(acj), now, utc)
		if !p.Run.IsZero() || p.RequeueAfter != 0 || !slices.Equal(reasons(p), []string{ReasonInvalidTemplate}) {
			t.Errorf("template %+v: plan %+v", acj.Spec.Template, p)
		}
	}
}

// TestPlanNoRerun (B3, kruise#862/#1488): a tick whose child is gone — deleted by its TTL, a
// history limit of 0 or a user — does not run again; neither does one the cache does not show yet.
func TestPlanNoRerun(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	tick := at(t, "2025-03-10T10:01:00Z")
	now := tick.Add(40 * time.Second)

	acj := newACJ("*/1 * * * *", created)
	acj.Status.LastScheduleTime = &metav1.Time{Time: tick}
	if p := plan(snap(acj), now, utc); !p.Run.IsZero() {
		t.Errorf("the child deleted after it ran: the tick runs again at %v", p.Run)
	}

	fresh := newACJ("*/1 * * * *", created) // status not written yet, child not in the cache yet
	s := snap(fresh)
	s.Created = tick
	if p := plan(s, now, utc); !p.Run.IsZero() {
		t.Errorf("a child created but not yet seen: the tick runs again at %v", p.Run)
	}

	seen := newACJ("*/1 * * * *", created) // status not written yet, child in the cache
	if p := plan(snap(seen, kid(tick, childActive, nil)), now, utc); !p.Run.IsZero() {
		t.Errorf("a child seen before the status: the tick runs again at %v", p.Run)
	}
}
