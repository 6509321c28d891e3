package advancedcronjob

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The controller's permissions, generated into config/rbac.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=advancedcronjobs,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=advancedcronjobs/status,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=advancedcronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=broadcastjobs,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=apps.kruise.io,resources=imagelistpulljobs,verbs=list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler runs AdvancedCronJobs: observe → plan → apply → status. It is the only writer of
// their status and of the children it creates and deletes.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Location is the zone of schedules without timeZone; the manager's zone (time.Local) when nil.
	Location *time.Location

	created createdTicks
}

// SetupWithManager runs the controller on the leader with workers workers; it watches the cron
// jobs and the Jobs, BroadcastJobs and ImageListPullJobs they control.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("advancedcronjob-controller")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("advancedcronjob-controller").
		For(&v1beta1.AdvancedCronJob{}).
		Owns(&batchv1.Job{}).
		Owns(&v1beta1.BroadcastJob{}).
		Owns(&v1beta1.ImageListPullJob{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile runs the due tick of one cron job, prunes its history, writes its status, and asks
// to be called again at the next tick.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	acj := &v1beta1.AdvancedCronJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, acj); err != nil {
		if apierrors.IsNotFound(err) {
			r.created.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err) // its children go with it (owner references)
	}
	if acj.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("advancedCronJob", klog.KObj(acj))
	ctx = ctrl.LoggerInto(ctx, log)
	snap, err := observe(ctx, r.Client, acj)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	r.created.expect(snap)
	loc := r.Location
	if loc == nil {
		loc = time.Local
	}
	p := plan(snap, now, options{Location: loc})
	log.V(1).Info("planned", "run", p.Run, "deletions", len(p.Delete), "next", p.Next, "children", len(snap.Children))
	created, applyErr := r.apply(ctx, snap, p)
	if err := r.writeStatus(ctx, acj, computeStatus(snap, p, created)); err != nil {
		return ctrl.Result{}, err
	}
	if applyErr != nil {
		return ctrl.Result{}, applyErr
	}
	return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
}

// writeStatus writes st when it differs from acj's.
func (r *Reconciler) writeStatus(ctx context.Context, acj *v1beta1.AdvancedCronJob, st v1beta1.AdvancedCronJobStatus) error {
	if equality.Semantic.DeepEqual(acj.Status, st) {
		return nil
	}
	upd := acj.DeepCopy()
	upd.Status = st
	if err := r.Client.Status().Update(ctx, upd); err != nil {
		return fmt.Errorf("update the status: %w", err)
	}
	return nil
}

// expectationTimeout is how long a created child may stay out of the cache before the controller
// stops waiting for it (a child deleted before the cache ever listed it).
const expectationTimeout = 30 * time.Second

// createdTicks remembers, per cron job, the latest tick this manager created a child for: an
// expectation that covers the time until the cache shows the child or the new status.
type createdTicks struct {
	mu sync.Mutex
	m  map[types.NamespacedName]createdTick
}

type createdTick struct {
	uid     types.UID
	at      time.Time // the tick
	created time.Time // when the child was created
	seen    bool      // the cache has shown the child
}

// record notes that the child for the tick at was created at now.
func (c *createdTicks) record(acj *v1beta1.AdvancedCronJob, at, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.NamespacedName]createdTick{}
	}
	key := types.NamespacedName{Namespace: acj.Namespace, Name: acj.Name}
	if old, ok := c.m[key]; ok && old.uid == acj.UID && !old.at.Before(at) {
		return
	}
	c.m[key] = createdTick{uid: acj.UID, at: at, created: now}
}

// expect fills in s what the cache may not show yet: the latest tick created (Created) and,
// while its child is missing from the cache, until when to wait for it (PendingUntil).
func (c *createdTicks) expect(s *snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := types.NamespacedName{Namespace: s.ACJ.Namespace, Name: s.ACJ.Name}
	t, ok := c.m[key]
	if !ok || t.uid != s.ACJ.UID {
		return
	}
	s.Created = t.at
	if t.seen {
		return
	}
	name := ChildName(s.ACJ.Name, t.at)
	if slices.ContainsFunc(s.Children, func(ch child) bool { return ch.Name == name }) {
		t.seen = true
		c.m[key] = t
		return
	}
	s.PendingUntil = t.created.Add(expectationTimeout)
}

func (c *createdTicks) forget(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}
