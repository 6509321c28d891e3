package advancedcronjob

import (
	"maps"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
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
	start := time.Date(2025, 3, 10, 10, 0, 30, 0, time.UTC)
	seqsim.Sequence{Seeds: seqsim.Seeds{First: 1, Count: 300}, Start: start, Tick: seqsim.Seconds(0, 39)}.Run(t, func(h *seqsim.History) {
		c := newCronSim(h)
		h.Steps(200, c.step)
	})
}

// cronSim is one seeded history of a cron job: the world, the views of it the cache showed, and
// what the checks remember across steps.
type cronSim struct {
	h       *seqsim.History
	start   time.Time
	policy  v1beta1.AdvancedCronJobConcurrencyPolicy
	acj     *v1beta1.AdvancedCronJob
	w       *world
	history []view // the world after each step; the cache shows one of them
	cache   int    // the view the cache shows: it never goes back, nor lags by 25s or more
	created createdTicks
	// everCreated are the children ever created; lastSeen the latest lastScheduleTime written.
	everCreated map[string]bool
	lastSeen    time.Time
}

func newCronSim(h *seqsim.History) *cronSim {
	rng := h.Rand()
	policies := []v1beta1.AdvancedCronJobConcurrencyPolicy{v1beta1.AdvancedCronJobAllowConcurrent,
		v1beta1.AdvancedCronJobForbidConcurrent, v1beta1.AdvancedCronJobReplaceConcurrent}
	c := &cronSim{h: h, start: h.Now(), policy: policies[rng.IntN(len(policies))], acj: newACJ("*/1 * * * *", h.Now()),
		w: &world{children: map[string]child{}}, everCreated: map[string]bool{}}
	c.acj.Spec.ConcurrencyPolicy = c.policy
	c.acj.Spec.SuccessfulJobsHistoryLimit = ptr.To(int32(rng.IntN(3)))
	c.acj.Spec.FailedJobsHistoryLimit = ptr.To(int32(rng.IntN(2)))
	h.Logf("policy %s, history limits %d succeeded, %d failed", c.policy, *c.acj.Spec.SuccessfulJobsHistoryLimit,
		*c.acj.Spec.FailedJobsHistoryLimit)
	return c
}

// step moves the children on, reconciles from what the cache shows and checks the result.
func (c *cronSim) step() bool {
	now := c.h.Now()
	c.moveChildren()
	v, fresh := c.read()
	a := c.acj.DeepCopy()
	a.Status = v.status
	s := &snapshot{ACJ: a, Kind: v1beta1.AdvancedCronJobJobTemplateKind, Children: v.children}
	c.created.expect(s)
	p := plan(s, now, utc)
	run := "none"
	if !p.Run.IsZero() {
		run = p.Run.Format(time.TimeOnly)
	}
	c.h.Logf("reconcile from the view of +%v (fresh %v): run %s, delete %d", v.at.Sub(c.start), fresh, run, len(p.Delete))
	made := c.apply(a, p)
	if c.policy == v1beta1.AdvancedCronJobForbidConcurrent && fresh {
		running := 0
		for _, ch := range c.w.children {
			if ch.State == childActive {
				running++
			}
		}
		if running > 1 {
			c.h.Fatalf("%d children run under Forbid", running)
		}
	}
	if v.version == c.w.version { // a write from a stale read conflicts
		c.w.status = computeStatus(s, p, made)
		c.w.version++
	}
	if lst := c.w.status.LastScheduleTime; lst != nil {
		if lst.Time.Before(c.lastSeen) {
			c.h.Fatalf("lastScheduleTime went back from %v to %v", c.lastSeen, lst.Time)
		}
		c.lastSeen = lst.Time
	}
	// A fresh reconcile with nothing in the way starts the current tick: under Forbid a
	// running child is in the way, under Forbid and Replace a child the cache does not show
	// yet (for expectationTimeout at most).
	tick := now.Truncate(time.Minute)
	blocked := c.policy == v1beta1.AdvancedCronJobForbidConcurrent && slices.ContainsFunc(v.children, func(ch child) bool { return ch.State == childActive }) ||
		c.policy != v1beta1.AdvancedCronJobAllowConcurrent && s.PendingUntil.After(now)
	if fresh && !blocked && tick.After(c.start) && !c.everCreated[ChildName("cj", tick)] {
		c.h.Fatalf("the tick %v was due and not started (plan %+v)", tick, p)
	}
	return false
}

// moveChildren plays the children's own controllers and users: children finish, fail or go.
func (c *cronSim) moveChildren() {
	for _, name := range slices.Sorted(maps.Keys(c.w.children)) {
		ch := c.w.children[name]
		switch r := c.h.Rand().IntN(10); {
		case ch.State == childActive && r < 3:
			ch.State = childSucceeded
		case ch.State == childActive && r < 4:
			ch.State = childFailed
		case ch.State != childActive && r < 6: // ttlSecondsAfterFinished, or a user
			delete(c.w.children, name)
			c.h.Logf("child %s deleted", name)
			continue
		}
		c.w.children[name] = ch
	}
}

// read records the world as it is now and returns the view the cache shows, and whether that is
// the world as it is now.
func (c *cronSim) read() (view, bool) {
	now := c.h.Now()
	c.history = append(c.history, c.w.view(now))
	if c.h.Rand().IntN(3) > 0 {
		c.cache = len(c.history) - 1
	}
	for now.Sub(c.history[c.cache].at) >= 25*time.Second {
		c.cache++
	}
	return c.history[c.cache], c.cache == len(c.history)-1
}

// apply carries out plan p made for a: deletions, and the child of the tick to run unless it
// exists (AlreadyExists); it returns the child of the tick, if any.
func (c *cronSim) apply(a *v1beta1.AdvancedCronJob, p *Plan) *child {
	now := c.h.Now()
	for _, d := range p.Delete {
		delete(c.w.children, d.Child.Name)
	}
	if p.Run.IsZero() {
		return nil
	}
	c.created.record(a, p.Run, now)
	name := ChildName("cj", p.Run)
	if existing, ok := c.w.children[name]; ok {
		return &existing // AlreadyExists: this cron job's child for the tick
	}
	if c.everCreated[name] {
		c.h.Fatalf("the tick %v got a second child %s (plan %+v)", p.Run, name, p)
	}
	c.everCreated[name] = true
	tick := p.Run
	ch := child{Name: name, UID: types.UID("uid-" + name), ScheduledAt: &tick, State: childActive}
	c.w.children[name] = ch
	c.h.Logf("child %s created", name)
	return &ch
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
