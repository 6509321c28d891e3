package cloneset

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
	"github.com/kruise-ng/kruise/pkg/platform/seqsim"
)

// sim plays the CloneSet controller and the cluster in one seeded history (h): each step the clock
// advances, pods become ready, finish terminating, the spec may change, the planner runs on what
// the controller's cache shows, its invariants are checked and its plan is applied to the true pods.
type sim struct {
	h        *seqsim.History
	spec     v1alpha1.CloneSetSpec
	current  string
	update   string
	class    map[string]int // revisions of equal class differ only in place
	pods     []*PodFacts
	readyAt  map[string]time.Time
	removeAt map[string]time.Time
	nextID   int
	seen     map[string]int // what the plans did, to prove the runs exercise each path
	opts     Options
	userAt   map[string]time.Time // when the simulated user's hook controller acts on a pod next
	// The cache lags behind the true pods (s.pods) as the informer's may: frames hold the pods as
	// they were, and the planner sees the newest frame at least lag old (spiking to lag+spike until
	// spikeEnd), never one older than it saw before (cacheAt). exp are the controller's
	// expectations of its own writes.
	frames     []frame
	cacheAt    time.Time
	lag, spike time.Duration
	spikeEnd   time.Time
	lagging    bool
	exp        *podcontrol.Expectations
}

type frame struct {
	at   time.Time
	pods []PodFacts
}

// simKey is the simulated CloneSet's expectations key.
const simKey = "ns/cs"

const stepLen = 5 * time.Second

func newSim(h *seqsim.History) *sim {
	rng := h.Rand()
	s := &sim{h: h, current: "r0", update: "r0", class: map[string]int{"r0": 0},
		readyAt: map[string]time.Time{}, removeAt: map[string]time.Time{}, seen: map[string]int{},
		userAt: map[string]time.Time{}, frames: []frame{{at: t0}}, cacheAt: t0, exp: podcontrol.NewExpectations()}
	obj := &v1alpha1.CloneSet{}
	r := int32(1 + rng.IntN(8))
	obj.Spec.Replicas = &r
	obj.Spec.UpdateStrategy.Type = []v1alpha1.CloneSetUpdateStrategyType{
		v1alpha1.RecreateCloneSetUpdateStrategyType, v1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType}[rng.IntN(3)]
	obj.Spec.UpdateStrategy.MaxUnavailable = ios([]string{"0", "1", "2", "20%", "50%"}[rng.IntN(5)])
	obj.Spec.UpdateStrategy.MaxSurge = ios([]string{"0", "1", "2", "50%"}[rng.IntN(4)])
	if obj.Spec.UpdateStrategy.Type == v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType {
		obj.Spec.UpdateStrategy.MaxSurge = ios("0") // forbidden together (CloneSet user manual)
	}
	if rng.IntN(3) == 0 {
		obj.Spec.ScaleStrategy.MaxUnavailable = ios([]string{"1", "2", "50%"}[rng.IntN(3)])
	}
	obj.Spec.MinReadySeconds = int32([]int{0, 0, 10}[rng.IntN(3)])
	s.opts.PartitionRollback = rng.IntN(2) == 0
	if rng.IntN(2) == 0 { // lifecycle hooks, each present or not
		hook := func() *appspub.LifecycleHook {
			if rng.IntN(2) == 0 {
				return nil
			}
			return &appspub.LifecycleHook{LabelsHandler: map[string]string{"hold": "true"}, MarkPodNotReady: rng.IntN(2) == 0}
		}
		obj.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: hook(), InPlaceUpdate: hook(), PreNormal: hook()}
	}
	defaults.SetDefaultsCloneSet(obj)
	s.spec = obj.Spec
	return s
}

func (s *sim) after(lo, hi int) time.Time {
	return s.h.Now().Add(time.Duration(lo+s.h.Rand().IntN(hi-lo+1)) * stepLen)
}

// progress lets the cluster move on, the clock having advanced: pods become ready and terminating
// pods go away.
func (s *sim) progress() {
	var kept []*PodFacts
	for _, p := range s.pods {
		if p.Terminating && !s.h.Now().Before(s.removeAt[p.Name]) {
			s.h.Logf("pod %s gone", p.Name)
			continue
		}
		if at, ok := s.readyAt[p.Name]; ok && !p.Terminating && !s.h.Now().Before(at) {
			delete(s.readyAt, p.Name)
			p.Ready, p.ReadySince, p.InPlaceUpdating, p.Phase = true, s.h.Now(), false, corev1.PodRunning
			if p.NodeName == "" {
				p.NodeName = fmt.Sprintf("node-%d", s.h.Rand().IntN(4))
			}
		}
		s.user(p)
		kept = append(kept, p)
	}
	s.pods = kept
}

// user plays the user's hook controller: it holds Normal pods for deletion and updates, and after
// a random delay releases a pod a hook holds (or, after an update, puts the hold back).
func (s *sim) user(p *PodFacts) {
	l := s.spec.Lifecycle
	if l == nil || p.Terminating {
		return
	}
	at, ok := s.userAt[p.Name]
	if !ok {
		s.userAt[p.Name] = s.after(0, 3)
		return
	}
	if s.h.Now().Before(at) {
		return
	}
	delete(s.userAt, p.Name)
	switch p.Lifecycle {
	case appspub.LifecycleStatePreparingNormal:
		p.PreNormalReleased = true
	case appspub.LifecycleStateNormal:
		p.PreDeleteHeld, p.PreUpdateHeld = l.PreDelete != nil, l.InPlaceUpdate != nil
		p.UpdatedReleased = true
	case appspub.LifecycleStatePreparingDelete:
		p.PreDeleteHeld = false
	case appspub.LifecycleStatePreparingUpdate:
		p.PreUpdateHeld, p.UpdatedReleased = false, l.InPlaceUpdate == nil
	case appspub.LifecycleStateUpdated:
		p.PreUpdateHeld, p.UpdatedReleased = true, true
	}
	s.h.Logf("user acts on %s in %s", p.Name, p.Lifecycle)
}

// chaos changes the spec (or marks a pod for deletion) now and then.
func (s *sim) chaos() {
	if s.h.Rand().IntN(100) >= 20 {
		return
	}
	us := &s.spec.UpdateStrategy
	switch s.h.Rand().IntN(6) {
	case 0, 1:
		if s.current == s.update || s.h.Rand().IntN(2) == 0 {
			s.current = s.update // the previous rollout counts as done
		}
		name := fmt.Sprintf("r%d", len(s.class))
		s.class[name] = s.class[s.update]
		if us.Type != v1alpha1.InPlaceOnlyCloneSetUpdateStrategyType && s.h.Rand().IntN(2) == 0 {
			s.class[name] = len(s.class)
		}
		s.update = name
		s.h.Logf("new revision %s (class %d)", name, s.class[name])
	case 2:
		r := int32(s.h.Rand().IntN(9))
		s.spec.Replicas = &r
		s.h.Logf("replicas %d", r)
	case 3:
		us.Partition = ios([]string{"0", "1", "2", "3", "50%", "100%"}[s.h.Rand().IntN(6)])
		s.h.Logf("partition %s", us.Partition.String())
	case 4:
		us.Paused = !us.Paused
		s.h.Logf("paused %v", us.Paused)
	case 5:
		if len(s.pods) > 0 {
			p := s.pods[s.h.Rand().IntN(len(s.pods))]
			p.SpecifiedDelete = true
			s.h.Logf("specified-delete %s", p.Name)
		}
	}
}

// lagBehind makes the seed's cache lag: up to 3×workloadloop.ExpectationTimeout, with spikes (spikeLag).
func (s *sim) lagBehind() {
	s.lagging = true
	s.lag = time.Duration(s.h.Rand().IntN(int(3*workloadloop.ExpectationTimeout/stepLen)+1)) * stepLen
	s.h.Logf("cache lag %s", s.lag)
}

// spikeLag now and then makes the cache lag up to 3×workloadloop.ExpectationTimeout more for up to a minute.
func (s *sim) spikeLag() {
	if !s.lagging || s.h.Rand().IntN(25) > 0 {
		return
	}
	s.spike, s.spikeEnd = time.Duration(1+s.h.Rand().IntN(int(3*workloadloop.ExpectationTimeout/stepLen)))*stepLen, s.after(1, 12)
	s.h.Logf("cache lag spikes to %s", s.lag+s.spike)
}

// truth are the true pods, copied.
func (s *sim) truth() []PodFacts {
	pods := make([]PodFacts, 0, len(s.pods))
	for _, p := range s.pods {
		pods = append(pods, *p)
	}
	return pods
}

// record adds the true pods as they are now to the frames the cache serves.
func (s *sim) record() {
	s.frames = append(s.frames, frame{at: s.h.Now(), pods: s.truth()})
}

// cached are the pods the cache shows now.
func (s *sim) cached() []PodFacts {
	lag := s.lag
	if s.h.Now().Before(s.spikeEnd) {
		lag += s.spike
	}
	if at := s.h.Now().Add(-lag); at.After(s.cacheAt) {
		s.cacheAt = at
	}
	i := 0
	for i+1 < len(s.frames) && !s.frames[i+1].at.After(s.cacheAt) {
		i++
	}
	s.frames = s.frames[i:]
	return s.frames[0].pods
}

// objects are pods as the expectations read them: name, deletion, revision and lifecycle state.
func objects(pods []PodFacts) map[string]*corev1.Pod {
	out := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Labels: map[string]string{
			inplace.RevisionLabel: p.Revision, appspub.LifecycleStateKey: string(p.Lifecycle)}}}
		if p.Terminating {
			pod.DeletionTimestamp = &metav1.Time{Time: t0}
		}
		out[p.Name] = pod
	}
	return out
}

// snapshot is what observe builds from pods.
func (s *sim) snapshot(pods []PodFacts) *Snapshot {
	snap := &Snapshot{Spec: s.spec, CurrentRevision: s.current, UpdateRevision: s.update,
		InPlace: map[string]inplace.Decision{}}
	for rev, c := range s.class {
		if rev == s.update {
			continue
		}
		if c == s.class[s.update] {
			snap.InPlace[rev] = inplace.Decision{Spec: &inplace.UpdateSpec{Revision: s.update}}
		} else {
			snap.InPlace[rev] = inplace.Decision{RecreateReasons: []string{"spec.volumes changed"}}
		}
	}
	if s.opts.PartitionRollback && s.current != s.update {
		d := inplace.Decision{Spec: &inplace.UpdateSpec{Revision: s.current}}
		if s.class[s.current] != s.class[s.update] {
			d = inplace.Decision{RecreateReasons: []string{"spec.volumes changed"}}
		}
		snap.Rollback = &d
	}
	snap.Pods = pods
	return snap
}

func (s *sim) pod(name string) *PodFacts {
	for _, p := range s.pods {
		if p.Name == name {
			return p
		}
	}
	s.h.Fatalf("plan names unknown pod %s", name)
	return nil
}

// effective is the part of plan p the API server carries out on the true pods: a write to a pod
// that is gone fails (NotFound), deleting or updating a terminating pod changes nothing that
// counts, and an in-place update of a pod no longer at the revision it was planned from fails its
// precondition.
func (s *sim) effective(p Plan) Plan {
	live := map[string]*PodFacts{}
	for _, pod := range s.pods {
		live[pod.Name] = pod
	}
	gone := func(name string) bool { return live[name] == nil || live[name].Terminating }
	e := p
	e.Deletes = slices.DeleteFunc(slices.Clone(p.Deletes), func(d Deletion) bool { return gone(d.Pod) })
	e.Updates = slices.DeleteFunc(slices.Clone(p.Updates), func(u Update) bool { return gone(u.Pod) || live[u.Pod].Revision != u.From })
	e.Lifecycle = slices.DeleteFunc(slices.Clone(p.Lifecycle), func(m LifecycleMove) bool { return live[m.Pod] == nil })
	return e
}

// apply carries the plan out on the true pods the way apply.go does, expectations included.
func (s *sim) apply(p Plan) {
	defer s.record()
	kill := func(pod *PodFacts, why string) {
		s.exp.ExpectDelete(simKey, pod.Name, s.h.Now())
		pod.Terminating = true
		s.removeAt[pod.Name] = s.after(0, 2)
		s.h.Logf("delete %s (%s)", pod.Name, why)
	}
	for _, d := range p.Deletes {
		s.seen["delete "+string(d.Kind)]++
		kill(s.pod(d.Pod), d.Reason)
	}
	for _, m := range p.Lifecycle {
		s.seen["lifecycle "+string(m.To)]++
		pod := s.pod(m.Pod)
		s.exp.ExpectLifecycle(simKey, pod.Name, string(m.To), s.h.Now())
		pod.Lifecycle = m.To
		s.h.Logf("lifecycle %s → %s (%s)", m.Pod, m.To, m.Reason)
	}
	for range p.Refusals {
		s.seen["refusal"]++
	}
	if len(p.Creates) > 0 && len(s.pods)+len(p.Creates) > p.Bounds.Replicas {
		s.seen["surge create"]++
	}
	for _, u := range p.Updates {
		pod := s.pod(u.Pod)
		s.seen["update "+string(u.Mode)]++
		if u.Mode == UpdateRecreate {
			kill(pod, u.Reason)
			continue
		}
		if u.To != s.update {
			s.seen["rollback"]++
		}
		s.exp.ExpectUpdate(simKey, pod.Name, u.To, s.h.Now())
		pod.Revision, pod.Ready, pod.ReadySince, pod.InPlaceUpdating = u.To, false, time.Time{}, true
		if s.spec.Lifecycle != nil {
			pod.Lifecycle = appspub.LifecycleStateUpdating
		}
		s.readyAt[pod.Name] = s.after(1, 3)
		s.h.Logf("in-place update %s %s→%s", pod.Name, u.From, u.To)
	}
	for _, c := range p.Creates {
		s.nextID++
		name := fmt.Sprintf("p%d", s.nextID)
		s.exp.ExpectCreate(simKey, name, s.h.Now())
		st, hooks := appspub.LifecycleStateNormal, s.spec.Lifecycle
		if hooks != nil && hooks.PreNormal != nil {
			st = appspub.LifecycleStatePreparingNormal
		}
		s.pods = append(s.pods, &PodFacts{Name: name, InstanceID: name, Revision: c.Revision,
			Phase: corev1.PodPending, CreationTime: s.h.Now(), Lifecycle: st, PreNormalReleased: st == appspub.LifecycleStateNormal,
			UpdatedReleased: true})
		s.readyAt[name] = s.after(1, 4)
		s.h.Logf("create %s at %s (%s)", name, c.Revision, c.Reason)
	}
	for _, n := range p.Notes {
		s.h.Logf("note: %s", n)
	}
}

// check asserts the package invariants of plan p computed from snap, the planner's view, and
// returns how many pods the plan leaves.
func (s *sim) check(snap *Snapshot, p Plan) int {
	b := p.Bounds
	oldKeep := 0
	for _, pod := range snap.Pods {
		if !pod.Terminating && !pod.SpecifiedDelete && pod.Revision != snap.UpdateRevision {
			oldKeep++
		}
	}
	oldLost, preparedLost := s.checkPods(snap, p)
	typ := snap.Spec.UpdateStrategy.Type
	if snap.Spec.UpdateStrategy.Paused && len(p.Updates) > 0 {
		s.h.Fatalf("paused, yet updates %v", p.updated())
	}
	after := s.bounds("", snap, p, s.available(snap))
	// No throwaway surge: when every pod to update can be updated in place within maxUnavailable and
	// none is to be replaced, no pod is created beyond replicas (openkruise/kruise#2369).
	allInPlace := typ != v1alpha1.RecreateCloneSetUpdateStrategyType && b.MaxUnavailable > 0
	for _, pod := range snap.Pods {
		if !pod.Terminating && (pod.SpecifiedDelete || (pod.Revision != snap.UpdateRevision && !snap.InPlace[pod.Revision].InPlace())) {
			allInPlace = false
		}
	}
	if allInPlace && len(p.Creates) > 0 && after > b.Replicas {
		s.h.Fatalf("%d pods after the plan > replicas %d though every pod can be updated in place", after, b.Replicas)
	}
	if oldAfter := oldKeep - oldLost; oldAfter < min(oldKeep, b.Partition) {
		s.h.Fatalf("old pods %d → %d, below partition %d", oldKeep, oldAfter, b.Partition)
	} else if c := p.creates(snap.CurrentRevision); snap.CurrentRevision != snap.UpdateRevision && c > max(0, b.Partition-oldAfter+preparedLost) {
		s.h.Fatalf("%d current-revision pods created, only %d needed for partition %d", c, b.Partition-oldAfter+preparedLost, b.Partition)
	}
	return after
}

// checkPods asserts the invariants of plan p computed from snap on each pod it names, and returns
// how many pods not at the update revision it takes away: by a deletion prepared earlier
// (preparedLost) or otherwise (oldLost).
func (s *sim) checkPods(snap *Snapshot, p Plan) (oldLost, preparedLost int) {
	byName := map[string]*PodFacts{}
	for i := range snap.Pods {
		byName[snap.Pods[i].Name] = &snap.Pods[i]
	}
	named := func(name string) *PodFacts {
		if byName[name] == nil {
			s.h.Fatalf("plan names unknown pod %s", name)
		}
		return byName[name]
	}
	for _, m := range p.Lifecycle {
		pod := named(m.Pod)
		switch {
		case m.To == appspub.LifecycleStatePreparingDelete && !pod.PreDeleteHeld:
			s.h.Fatalf("pod %s prepared for deletion though no hook holds it", m.Pod)
		case m.To == appspub.LifecycleStatePreparingUpdate && !pod.PreUpdateHeld:
			s.h.Fatalf("pod %s prepared for an update though no hook holds it", m.Pod)
		}
	}
	for _, d := range p.Deletes {
		pod := named(d.Pod)
		if pod.Terminating {
			s.h.Fatalf("plan deletes terminating pod %s", d.Pod)
		}
		if pod.PreDeleteHeld {
			s.h.Fatalf("pod %s deleted while its preDelete hook holds it", d.Pod)
		}
		// A deletion begun earlier stands (DeletePrepared), as in OpenKruise, whatever the
		// partition: the pod is replaced at the current revision afterwards.
		if !pod.SpecifiedDelete && pod.Revision != snap.UpdateRevision {
			if d.Kind == DeletePrepared {
				preparedLost++
			} else {
				oldLost++
			}
		}
	}
	typ := snap.Spec.UpdateStrategy.Type
	for _, u := range p.Updates {
		pod := named(u.Pod)
		if pod.Terminating {
			s.h.Fatalf("plan updates terminating pod %s", u.Pod)
		}
		if (u.Mode == UpdateInPlace && pod.PreUpdateHeld) || (u.Mode == UpdateRecreate && pod.PreDeleteHeld) {
			s.h.Fatalf("pod %s updated (%s) while a hook holds it", u.Pod, u.Mode)
		}
		if pod.Lifecycle == appspub.LifecycleStatePreparingDelete {
			s.h.Fatalf("pod %s in PreparingDelete updated", u.Pod)
		}
		if u.To != snap.UpdateRevision { // a rollback
			if !s.opts.PartitionRollback || u.To != snap.CurrentRevision || pod.Revision != snap.UpdateRevision || pod.SpecifiedDelete {
				s.h.Fatalf("rollback of %s (%s→%s) without the gate, or not from the update to the current revision", u.Pod, pod.Revision, u.To)
			}
			if u.Mode == UpdateRecreate && typ != v1alpha1.RecreateCloneSetUpdateStrategyType && snap.Rollback != nil && snap.Rollback.InPlace() {
				s.h.Fatalf("pod %s recreated for a rollback though in place was possible under %s", u.Pod, typ)
			}
			continue
		}
		if pod.Revision == snap.UpdateRevision || pod.SpecifiedDelete {
			s.h.Fatalf("updated pod %s is at the update revision or specified", u.Pod)
		}
		oldLost++
		if u.Mode == UpdateRecreate && typ != v1alpha1.RecreateCloneSetUpdateStrategyType && snap.InPlace[pod.Revision].InPlace() {
			s.h.Fatalf("pod %s recreated though in place was possible under %s", u.Pod, typ)
		}
	}
	return oldLost, preparedLost
}

// available are the names of the pods of snap available now.
func (s *sim) available(snap *Snapshot) map[string]bool {
	out := map[string]bool{}
	minReady := time.Duration(snap.Spec.MinReadySeconds) * time.Second
	for _, pod := range snap.Pods {
		// Serving: a Ready pod still in PreparingNormal that no hook holds is in its endpoints.
		if pod.Available(s.h.Now(), minReady) || pod.servingBeforeNormal(s.h.Now(), minReady) {
			out[pod.Name] = true
		}
	}
	return out
}

// bounds asserts the count invariants of plan p carried out on the pods of snap (every pod it
// names is in snap and not terminating), counting the pods of avail as available, and returns how
// many pods it leaves: no more available pods made unavailable than maxUnavailable allows, no
// scale-in below replicas, no more pods than replicas + maxSurge.
func (s *sim) bounds(what string, snap *Snapshot, p Plan, avail map[string]bool) int {
	b := p.Bounds
	active, available := 0, 0
	for _, pod := range snap.Pods {
		if !pod.Terminating {
			active++
			if avail[pod.Name] {
				available++
			}
		}
	}
	scaleIn, scaleInAvail, disrupted, removed := 0, 0, 0, 0
	for _, m := range p.Lifecycle {
		if m.To == appspub.LifecycleStatePreparingUpdate && avail[m.Pod] {
			disrupted++
		}
	}
	for _, d := range p.Deletes {
		removed++
		if d.Kind == DeleteScaleIn {
			scaleIn++
			if avail[d.Pod] {
				scaleInAvail++
			}
		} else if avail[d.Pod] {
			disrupted++
		}
	}
	for _, u := range p.Updates {
		if avail[u.Pod] {
			disrupted++
		}
		if u.Mode == UpdateRecreate {
			removed++
		}
	}
	if budget := max(0, available-scaleInAvail-(b.Replicas-b.MaxUnavailable)); disrupted > budget {
		s.h.Fatalf("%splan makes %d available pods unavailable, budget %d (available %d, replicas %d, maxUnavailable %d)",
			what, disrupted, budget, available-scaleInAvail, b.Replicas, b.MaxUnavailable)
	}
	if scaleIn > 0 && active-scaleIn < b.Replicas {
		s.h.Fatalf("%sscale-in of %d leaves %d < replicas %d", what, scaleIn, active-scaleIn, b.Replicas)
	}
	after := active - removed + len(p.Creates)
	// Pods a preDelete hook holds stay beyond replicas + maxSurge until released; nothing is created
	// on top of them.
	held := 0
	for _, pod := range snap.Pods {
		if !pod.Terminating && (pod.Lifecycle == appspub.LifecycleStatePreparingDelete || slices.ContainsFunc(p.Lifecycle,
			func(m LifecycleMove) bool { return m.Pod == pod.Name && m.To == appspub.LifecycleStatePreparingDelete })) {
			held++
		}
	}
	if after-held > b.Replicas+b.MaxSurge || (len(p.Creates) > 0 && after > b.Replicas+b.MaxSurge) {
		s.h.Fatalf("%s%d pods after the plan (%d held for deletion, %d created) > replicas %d + maxSurge %d", what, after, held,
			len(p.Creates), b.Replicas, b.MaxSurge)
	}
	return after
}

// converged reports whether the rollout is finished for the current spec.
func (s *sim) converged(p Plan) bool {
	b := p.Bounds
	old := 0
	for _, pod := range s.pods {
		if pod.Terminating || pod.SpecifiedDelete || !pod.Available(s.h.Now(), time.Duration(s.spec.MinReadySeconds)*time.Second) {
			return false
		}
		if pod.Revision != s.update {
			old++
		}
	}
	return p.Empty() && len(s.pods) == b.Replicas && old <= b.Partition
}

// TestRolloutSequences runs seeded random sequences of spec changes and pod readiness, checking the
// planner's invariants after every step, then requires the rollout to converge once the spec stops
// changing.
func TestRolloutSequences(t *testing.T) {
	runSequences(t, 1, 200, false)
}

// TestRolloutSequencesLaggingCache runs the sequences with the planner reading a cache that lags
// behind the true pods, many seeds beyond workloadloop.ExpectationTimeout, through the Reconciler's expectations,
// and checks the count invariants on the true pods. (When expectations were dropped at the timeout,
// two thirds of these seeds created or deleted pods a second time: Expectations.Pending.)
func TestRolloutSequencesLaggingCache(t *testing.T) {
	runSequences(t, 1001, 300, true, "cache wait", "live read")
}

// runSequences runs the seeds from first on, with a lagging cache or not, and requires the runs to
// exercise each planner path and the paths named.
func runSequences(t *testing.T, first, runs uint64, lagging bool, paths ...string) {
	const chaosSteps, convergeSteps = 60, 200
	seen := map[string]int{}
	defer func() {
		if t.Failed() || !seqsim.OwnSeeds() {
			return
		}
		for _, k := range append([]string{"delete ScaleIn", "delete Specified", "update InPlace", "update Recreate", "surge create",
			"rollback", "lifecycle PreparingDelete", "lifecycle PreparingUpdate", "lifecycle Updated", "lifecycle Normal"}, paths...) {
			if seen[k] == 0 {
				t.Errorf("no run exercised %q: %v", k, seen)
			}
		}
	}()
	seqsim.Sequence{Seeds: seqsim.Seeds{First: first, Count: runs}, Start: t0, Tick: seqsim.Every(stepLen)}.Run(t, func(h *seqsim.History) {
		s := newSim(h)
		defer func() {
			for k, v := range s.seen {
				seen[k] += v
			}
		}()
		h.Logf("spec: replicas %d type %s maxUnavailable %s maxSurge %s minReady %d",
			*s.spec.Replicas, s.spec.UpdateStrategy.Type, s.spec.UpdateStrategy.MaxUnavailable.String(),
			s.spec.UpdateStrategy.MaxSurge.String(), s.spec.MinReadySeconds)
		converge := convergeSteps
		if lagging {
			s.lagBehind()
			// Each write waits for the cache to show the one before: a rollout takes longer.
			converge *= 1 + int(s.lag/workloadloop.ExpectationTimeout)
		}
		h.Steps(chaosSteps, func() bool {
			s.progress()
			s.chaos()
			s.spikeLag()
			s.reconcile(false)
			return false
		})
		s.spec.UpdateStrategy.Paused = false
		h.Logf("spec frozen, unpaused")
		if !h.Steps(converge, func() bool { s.progress(); return s.reconcile(h.Step() > chaosSteps) }) {
			h.Fatalf("no convergence within %d steps after the spec froze", converge)
		}
	})
}

// reconcile records the true pods and, unless the controller waits for its own writes to show in
// the cache, plans from what the cache shows, checks the plan's invariants on that view and on the
// true pods, and applies it. With converge, it reports whether the rollout converged instead of
// applying the (then empty) plan.
func (s *sim) reconcile(converge bool) bool {
	s.record()
	view := s.snapshot(s.cached())
	wait, _ := s.exp.Pending(simKey, objects(view.Pods), s.h.Now(), workloadloop.ExpectationTimeout, func() (map[string]*corev1.Pod, error) {
		s.seen["live read"]++
		s.h.Logf("writes not in the cache after the expectation timeout: live read")
		return objects(s.truth()), nil
	})
	if wait {
		s.seen["cache wait"]++
		return false
	}
	p := Compute(view, s.h.Now(), s.opts)
	planned := s.check(view, p)
	if converge && s.converged(p) {
		return true
	}
	// The invariants hold on the true pods too, for the part of the plan the API server carries
	// out. A pod counts as available there only if the cache shows it so too: the plan cannot count
	// on availability it does not see (a pod ready since may be the one it updates, as it would
	// have been a moment earlier). No create fills the place of a pod the cache does not show: the
	// plan leaves as many pods as it planned for.
	e, truth, shown := s.effective(p), s.snapshot(s.truth()), s.available(view)
	avail := s.available(truth)
	maps.DeleteFunc(avail, func(name string, _ bool) bool { return !shown[name] })
	if after := s.bounds("true pods: ", truth, e, avail); len(e.Creates) > 0 && after > planned {
		s.h.Fatalf("%d pods after the plan, not the %d planned: its %d creates fill the places of pods the cache does not show",
			after, planned, len(e.Creates))
	}
	s.apply(e)
	return false
}
