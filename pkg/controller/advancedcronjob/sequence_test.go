package advancedcronjob

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// world is the cluster a simulated controller acts on: the cron job's status and its children.
type world struct {
	status   v1beta1.AdvancedCronJobStatus
	version  int // bumped by every status write
	children map[string]child
}

// view is what the controller's cache shows: the world as it was at some time.
type view struct {
	at       time.Time
	status   v1beta1.AdvancedCronJobStatus
	version  int
	children []child
}

func (w *world) view(now time.Time) view {
	v := view{at: now, status: *w.status.DeepCopy(), version: w.version}
	for _, c := range w.children {
		v.children = append(v.children, c)
	}
	slices.SortFunc(v.children, func(a, b child) int { return a.ScheduledAt.Compare(*b.ScheduledAt) })
	return v
}

// TestSequenceInvariants drives plan and computeStatus through random histories — children that
// finish, fail or are deleted (TTL, by hand) at random times, reconciles at random moments that
// read a cache lagging behind — and checks at every step: no tick gets a second child (the
// BroadcastJob loop of kruise#862/#1488), Forbid never lets two children run, lastScheduleTime
// never goes back, and a tick reconciled in time with nothing in its way gets its child.
func TestSequenceInvariants(t *testing.T) {
	rng := rand.New(rand.NewSource(20250310))
	policies := []v1beta1.AdvancedCronJobConcurrencyPolicy{v1beta1.AdvancedCronJobAllowConcurrent,
		v1beta1.AdvancedCronJobForbidConcurrent, v1beta1.AdvancedCronJobReplaceConcurrent}
	for run := 0; run < 300; run++ {
		policy := policies[rng.Intn(len(policies))]
		t.Run(fmt.Sprintf("%d-%s", run, policy), func(t *testing.T) {
			simulate(t, rng, policy)
		})
	}
}

func simulate(t *testing.T, rng *rand.Rand, policy v1beta1.AdvancedCronJobConcurrencyPolicy) {
	start := time.Date(2025, 3, 10, 10, 0, 30, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	acj := newACJ("*/1 * * * *", start)
	acj.Spec.ConcurrencyPolicy = policy
	acj.Spec.SuccessfulJobsHistoryLimit = ptr.To(int32(rng.Intn(3)))
	acj.Spec.FailedJobsHistoryLimit = ptr.To(int32(rng.Intn(2)))
	w := &world{children: map[string]child{}}
	var history []view // the world after each step; the cache shows one of them
	cache := 0         // the view the cache shows: it never goes back, nor lags by 25s or more
	var created createdTicks
	everCreated := map[string]bool{}
	var lastSeen time.Time

	for step := 0; step < 200; step++ {
		clk.Step(time.Duration(rng.Intn(40)) * time.Second)
		now := clk.Now()
		for name, c := range w.children { // the children's own controllers and users
			switch r := rng.Intn(10); {
			case c.State == childActive && r < 3:
				c.State = childSucceeded
			case c.State == childActive && r < 4:
				c.State = childFailed
			case c.State != childActive && r < 6: // ttlSecondsAfterFinished, or a user
				delete(w.children, name)
				continue
			}
			w.children[name] = c
		}
		history = append(history, w.view(now))
		if rng.Intn(3) > 0 {
			cache = len(history) - 1
		}
		for now.Sub(history[cache].at) >= 25*time.Second {
			cache++
		}
		v := history[cache]
		fresh := cache == len(history)-1

		a := acj.DeepCopy()
		a.Status = v.status
		s := &snapshot{ACJ: a, Kind: v1beta1.AdvancedCronJobJobTemplateKind, Children: v.children}
		created.expect(s)
		p := plan(s, now, utc)

		for _, d := range p.Delete {
			delete(w.children, d.Child.Name)
		}
		var made *child
		if !p.Run.IsZero() {
			name := ChildName("cj", p.Run)
			if existing, ok := w.children[name]; ok {
				made = &existing // AlreadyExists: this cron job's child for the tick
			} else {
				if everCreated[name] {
					t.Fatalf("step %d at %v: the tick %v got a second child %s (plan %+v)", step, now, p.Run, name, p)
				}
				everCreated[name] = true
				tick := p.Run
				c := child{Name: name, UID: types.UID("uid-" + name), ScheduledAt: &tick, State: childActive}
				w.children[name] = c
				made = &c
			}
			created.record(a, p.Run, now)
		}
		if policy == v1beta1.AdvancedCronJobForbidConcurrent && fresh {
			running := 0
			for _, c := range w.children {
				if c.State == childActive {
					running++
				}
			}
			if running > 1 {
				t.Fatalf("step %d at %v: %d children run under Forbid", step, now, running)
			}
		}
		if v.version == w.version { // a write from a stale read conflicts
			w.status = computeStatus(s, p, made)
			w.version++
		}
		if lst := w.status.LastScheduleTime; lst != nil {
			if lst.Time.Before(lastSeen) {
				t.Fatalf("step %d: lastScheduleTime went back from %v to %v", step, lastSeen, lst.Time)
			}
			lastSeen = lst.Time
		}
		// A fresh reconcile with nothing in the way starts the current tick: under Forbid a
		// running child is in the way, under Forbid and Replace a child the cache does not show
		// yet (for expectationTimeout at most).
		tick := now.Truncate(time.Minute)
		blocked := policy == v1beta1.AdvancedCronJobForbidConcurrent && slices.ContainsFunc(v.children, func(c child) bool { return c.State == childActive }) ||
			policy != v1beta1.AdvancedCronJobAllowConcurrent && s.PendingUntil.After(now)
		if fresh && !blocked && tick.After(start) && !everCreated[ChildName("cj", tick)] {
			t.Fatalf("step %d at %v: the tick %v was due and not started (plan %+v)", step, now, tick, p)
		}
	}
}

// TestComputeStatus: the status lists the running children by name and the latest tick run.
func TestComputeStatus(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	t1, t2, t3 := at(t, "2025-03-10T10:01:00Z"), at(t, "2025-03-10T10:02:00Z"), at(t, "2025-03-10T10:03:00Z")
	acj := newACJ("*/1 * * * *", created)
	acj.Status.LastScheduleTime = &metav1.Time{Time: t1}
	deleting := kid(t1, childActive, nil)
	deleting.Deleting = true
	s := snap(acj, kid(t2, childActive, nil), deleting, kid(t1.Add(-time.Minute), childSucceeded, nil))
	p := &Plan{}
	st := computeStatus(s, p, &child{Name: ChildName("cj", t3), UID: "new-uid", ScheduledAt: &t3})
	if st.Type != v1beta1.AdvancedCronJobJobTemplateKind {
		t.Errorf("type %q", st.Type)
	}
	var names []string
	for _, r := range st.Active {
		names = append(names, r.Name)
		if r.APIVersion != "batch/v1" || r.Kind != "Job" || r.Namespace != "ns" || r.UID == "" {
			t.Errorf("reference %+v", r)
		}
	}
	if want := []string{ChildName("cj", t2), ChildName("cj", t3)}; !slices.Equal(names, want) {
		t.Errorf("active %v, want %v", names, want)
	}
	if st.LastScheduleTime == nil || !st.LastScheduleTime.Equal(&metav1.Time{Time: t3}) {
		t.Errorf("lastScheduleTime %v, want %v", st.LastScheduleTime, t3)
	}

	// Replace's deletions leave the status at once; a child newer than the status moves it on.
	p = &Plan{Delete: []Deletion{{Child: s.Children[0]}}}
	st = computeStatus(s, p, nil)
	if len(st.Active) != 0 || !st.LastScheduleTime.Equal(&metav1.Time{Time: t2}) {
		t.Errorf("after Replace: active %v, lastScheduleTime %v", st.Active, st.LastScheduleTime)
	}
}
