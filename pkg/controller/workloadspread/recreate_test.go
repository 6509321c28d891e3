package workloadspread

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
)

// A workload deleted with its pods and created again under its name (seed 24 of the soak): the
// garbage collector's deletions of the old pods wait on the webhook (during a manager freeze)
// while the controller recounts, the new workload creating pods meanwhile. The old pods count
// until they are gone: the webhook records each one's deletion, freeing one replica, so a
// recount that left them out (their workload gone, or of another UID) freed their replicas a
// second time, and subset a took more new pods than its maxReplicas 2.
func TestRecreatedWorkloadKeepsQuota(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps func(w *spreadWorld)
	}{
		{"every deletion admitted after the recount", func(w *spreadWorld) {
			w.deleteWorkload()
			w.reconcile()
			w.release("p1", "p2", "p3")
			w.recreateWorkload()
			w.create("n0", "n1", "n2", "n3", "n4")
		}},
		{"the new workload's first pod before the recount", func(w *spreadWorld) {
			w.deleteWorkload()
			w.release("p1")
			w.recreateWorkload()
			w.create("n0")
			w.reconcile()
			w.release("p2", "p3")
			w.create("n1", "n2", "n3", "n4")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newSpreadWorld(t)
			tc.steps(w)
			if n := w.newInA(); n != 2 {
				t.Fatalf("%d new pods placed in subset a of maxReplicas 2, want 2", n)
			}
		})
	}
}

// spreadWorld is spreadAB over CloneSet web (uid old) with p1, p2 in a (full) and p3 in b, counted
// so; the webhook's decisions are spreadrules', on the stored status, the controller the
// Reconciler on a fake client.
type spreadWorld struct {
	t      *testing.T
	ctx    context.Context
	c      client.Client
	r      *Reconciler
	clock  *clocktesting.FakeClock
	key    client.ObjectKey
	placed map[string]string // new pod → subset
}

func newSpreadWorld(t *testing.T) *spreadWorld {
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	spread := spreadAB()
	spread.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{spreadrules.VersionIgnored: {
		{Name: "a", Replicas: 2}, {Name: "b", Replicas: 1, MissingReplicas: -1}}}
	spread.Status.SubsetStatuses = spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
	objs := []client.Object{spread, cloneSet("old"), ownedPod("p1", "a", "old"), ownedPod("p2", "a", "old"), ownedPod("p3", "b", "old")}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&appsv1alpha1.WorkloadSpread{}).Build()
	clock := clocktesting.NewFakeClock(now)
	return &spreadWorld{t: t, ctx: context.Background(), c: c, clock: clock, key: client.ObjectKeyFromObject(spread),
		r: &Reconciler{Client: c, Clock: clock, Finder: &workloadfinder.Finder{Reader: c}}, placed: map[string]string{}}
}

func (w *spreadWorld) spread() *appsv1alpha1.WorkloadSpread {
	w.t.Helper()
	spread := &appsv1alpha1.WorkloadSpread{}
	if err := w.c.Get(w.ctx, w.key, spread); err != nil {
		w.t.Fatal(err)
	}
	return spread
}

// decide has the webhook decide on the stored status (the initial one when there is none) and
// writes the change.
func (w *spreadWorld) decide(decide func([]spreadrules.Slot) spreadrules.Decision) string {
	w.t.Helper()
	spread := w.spread()
	statuses := spread.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
	if len(statuses) == 0 {
		statuses = spreadrules.InitialStatuses(spread.Spec.Subsets, 0)
	}
	d := decide(spreadrules.SlotsFrom(spread.Spec.Subsets, statuses))
	if d.Change != nil {
		setVersioned(spread, d.Change.Apply(statuses, w.clock.Now()))
		if err := w.c.Status().Update(w.ctx, spread); err != nil {
			w.t.Fatal(err)
		}
	}
	return d.Subset
}

// release admits the deletion of old pods, which then go.
func (w *spreadWorld) release(names ...string) {
	for _, name := range names {
		p := &corev1.Pod{}
		if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: "ns", Name: name}, p); err != nil {
			w.t.Fatal(err)
		}
		w.decide(func(slots []spreadrules.Slot) spreadrules.Decision {
			return spreadrules.Release(slots, name, spreadrules.MatchedOf(p).Subset)
		})
		if err := w.c.Delete(w.ctx, p); err != nil {
			w.t.Fatal(err)
		}
	}
}

// create admits pods of the new CloneSet, which then exist.
func (w *spreadWorld) create(names ...string) {
	for _, name := range names {
		subset := w.decide(func(slots []spreadrules.Slot) spreadrules.Decision {
			return spreadrules.Choose(slots, spreadrules.Creation{Name: name})
		})
		w.placed[name] = subset
		if err := w.c.Create(w.ctx, ownedPod(name, subset, "new")); err != nil {
			w.t.Fatal(err)
		}
	}
}

func (w *spreadWorld) reconcile() {
	w.t.Helper()
	w.clock.Step(time.Second)
	if _, err := w.r.Reconcile(w.ctx, ctrl.Request{NamespacedName: w.key}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *spreadWorld) deleteWorkload() {
	if err := w.c.Delete(w.ctx, cloneSet("old")); err != nil {
		w.t.Fatal(err)
	}
}

func (w *spreadWorld) recreateWorkload() {
	if err := w.c.Create(w.ctx, cloneSet("new")); err != nil {
		w.t.Fatal(err)
	}
}

func (w *spreadWorld) newInA() int {
	n := 0
	for _, s := range w.placed {
		if s == "a" {
			n++
		}
	}
	return n
}

// The pods a recount takes from outside the workload: placed by the spread, live, controlled by a
// workload of the targetRef's kind and name (any UID) or by none and matched by the workload's
// selector; not released pods, not another workload's, not terminating ones.
func TestLeftPods(t *testing.T) {
	released := ownedPod("released", "a", "old")
	released.OwnerReferences, released.Labels = nil, map[string]string{"app": "web-released"}
	orphan := ownedPod("orphan", "a", "old") // its workload deleted with propagation Orphan: the new one adopts it
	orphan.OwnerReferences = nil
	other := ownedPod("other", "a", "x")
	other.OwnerReferences[0].Name = "api"
	going := ownedPod("going", "a", "old")
	going.DeletionTimestamp, going.Finalizers = ptr.To(at(0)), []string{"test"}
	unplaced := ownedPod("unplaced", "", "old")
	if got := counted(t, cloneSet("new"), ownedPod("old", "a", "old"), ownedPod("new", "a", "new"), released, orphan, other, going, unplaced); got != "[new old orphan]" {
		t.Fatalf("pods counted %v, want [new old orphan]", got)
	}
	// While the workload is gone (deleted with propagation Orphan, not made again yet), its
	// orphans count: a workload made again adopts them, maybe before the spread is recounted.
	if got := counted(t, orphan.DeepCopy(), ownedPod("old", "a", "old")); got != "[old orphan]" {
		t.Fatalf("the workload gone: pods counted %v, want [old orphan]", got)
	}
}

// counted are the names of the pods spreadAB's recount counts among objs.
func counted(t *testing.T, objs ...client.Object) string {
	t.Helper()
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, spreadAB())...).Build()
	r := &Reconciler{Client: c, Finder: &workloadfinder.Finder{Reader: c}}
	snap, err := r.observe(context.Background(), spreadAB())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range snap.pods {
		names = append(names, p.Name)
	}
	return fmt.Sprint(names)
}

func cloneSet(uid string) *appsv1alpha1.CloneSet {
	return &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: types.UID(uid)},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](5),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
}

// ownedPod is pod controlled by the CloneSet web of uid, pending (no node).
func ownedPod(name, subset, uid string) *corev1.Pod {
	p := pod(name, subset)
	p.UID = types.UID(name)
	p.OwnerReferences[0].UID = types.UID(uid)
	p.Spec.NodeName = ""
	p.Status.Phase = corev1.PodPending
	return p
}
