package advancedcronjob

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
)

type rig struct {
	t   *testing.T
	c   client.Client
	clk *testingclock.FakeClock
	r   *Reconciler
	rec *events.FakeRecorder
}

func newRig(t *testing.T, acj *v1beta1.AdvancedCronJob, now time.Time) *rig {
	t.Helper()
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(acj).WithStatusSubresource(acj, &v1beta1.BroadcastJob{}, &v1beta1.ImageListPullJob{}, &batchv1.Job{}).Build()
	clk := testingclock.NewFakeClock(now)
	rec := events.NewFakeRecorder(100)
	return &rig{t: t, c: c, clk: clk, rec: rec, r: &Reconciler{Client: c, Recorder: rec, Clock: clk, Location: time.UTC}}
}

func (g *rig) reconcile() ctrl.Result {
	g.t.Helper()
	res, err := g.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "cj"}})
	if err != nil {
		g.t.Fatal(err)
	}
	return res
}

func (g *rig) acj() *v1beta1.AdvancedCronJob {
	g.t.Helper()
	acj := &v1beta1.AdvancedCronJob{}
	if err := g.c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "cj"}, acj); err != nil {
		g.t.Fatal(err)
	}
	return acj
}

func (g *rig) list(l client.ObjectList) {
	g.t.Helper()
	if err := g.c.List(context.Background(), l, client.InNamespace("ns")); err != nil {
		g.t.Fatal(err)
	}
}

// TestReconcileJob: a tick creates one Job named and annotated as OpenKruise does, owned by the
// cron job, in status.active; a deleted Job's tick does not run again; the next tick does.
func TestReconcileJob(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	g := newRig(t, newACJ("*/1 * * * *", created), at(t, "2025-03-10T10:01:05Z"))
	res := g.reconcile()
	if want := 55*time.Second + nextTickDelta; res.RequeueAfter != want {
		t.Errorf("requeue after %v, want %v", res.RequeueAfter, want)
	}
	jobs := &batchv1.JobList{}
	g.list(jobs)
	if len(jobs.Items) != 1 {
		t.Fatalf("%d jobs, want 1", len(jobs.Items))
	}
	job := jobs.Items[0]
	tick := at(t, "2025-03-10T10:01:00Z")
	if job.Name != "cj-1741600860" || job.Annotations[ScheduledAtAnnotation] != "2025-03-10T10:01:00Z" ||
		job.Annotations["note"] != "x" || job.Labels["app"] != "cj" {
		t.Errorf("job %s annotations %v labels %v", job.Name, job.Annotations, job.Labels)
	}
	if ref := metav1.GetControllerOf(&job); ref == nil || ref.Kind != "AdvancedCronJob" || ref.APIVersion != "apps.kruise.io/v1beta1" ||
		ref.UID != "cj-uid" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
		t.Errorf("owner %+v", ref)
	}
	if job.Spec.Template.Spec.Containers[0].Image != "busybox" {
		t.Errorf("spec %+v", job.Spec)
	}
	st := g.acj().Status
	if st.Type != v1beta1.AdvancedCronJobJobTemplateKind || len(st.Active) != 1 || st.Active[0].Name != job.Name ||
		st.LastScheduleTime == nil || !st.LastScheduleTime.Time.Equal(tick) {
		t.Errorf("status %+v", st)
	}

	g.clk.Step(20 * time.Second)
	g.reconcile()
	g.list(jobs)
	if len(jobs.Items) != 1 {
		t.Fatalf("a second reconcile in the same minute: %d jobs", len(jobs.Items))
	}
	// The job finishes and is deleted (its TTL): the tick stays run.
	if err := g.c.Delete(context.Background(), &jobs.Items[0]); err != nil {
		t.Fatal(err)
	}
	g.reconcile()
	g.list(jobs)
	if len(jobs.Items) != 0 || len(g.acj().Status.Active) != 0 || !g.acj().Status.LastScheduleTime.Time.Equal(tick) {
		t.Fatalf("after the job's deletion: %d jobs, status %+v", len(jobs.Items), g.acj().Status)
	}
	g.clk.SetTime(at(t, "2025-03-10T10:02:00.1Z"))
	g.reconcile()
	g.list(jobs)
	if len(jobs.Items) != 1 || jobs.Items[0].Name != "cj-1741600920" {
		t.Fatalf("next tick: jobs %v", jobs.Items)
	}
	expectEvents(t, g.rec, ReasonSuccessfulCreate, ReasonSuccessfulCreate)
}

// TestReconcileBroadcastJobNoLoop (B3, kruise#862): a BroadcastJob that completes under a
// successfulJobsHistoryLimit of 0 is deleted and never recreated for its tick.
func TestReconcileBroadcastJobNoLoop(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	acj := newACJ("*/1 * * * *", created)
	acj.Spec.Template.JobTemplate = nil
	acj.Spec.Template.BroadcastJobTemplate = &v1beta1.AdvancedCronJobBroadcastJobTemplate{
		Spec: v1beta1.BroadcastJobSpec{CompletionPolicy: v1beta1.BroadcastJobCompletionPolicy{Type: v1beta1.BroadcastJobCompletionPolicyAlways},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}}
	acj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	g := newRig(t, acj, at(t, "2025-03-10T10:01:01Z"))
	g.reconcile()
	jobs := &v1beta1.BroadcastJobList{}
	g.list(jobs)
	if len(jobs.Items) != 1 || jobs.Items[0].Name != "cj-1741600860" || jobs.Items[0].Spec.CompletionPolicy.Type != v1beta1.BroadcastJobCompletionPolicyAlways {
		t.Fatalf("broadcast jobs %+v", jobs.Items)
	}
	if st := g.acj().Status; st.Type != v1beta1.AdvancedCronJobBroadcastJobTemplateKind || len(st.Active) != 1 ||
		st.Active[0].APIVersion != "apps.kruise.io/v1beta1" || st.Active[0].Kind != "BroadcastJob" {
		t.Errorf("status %+v", st)
	}
	bj := jobs.Items[0]
	bj.Status.Conditions = []v1beta1.BroadcastJobCondition{{Type: v1beta1.BroadcastJobComplete, Status: corev1.ConditionTrue}}
	if err := g.c.Status().Update(context.Background(), &bj); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		g.clk.Step(5 * time.Second)
		g.reconcile()
		g.list(jobs)
		if len(jobs.Items) != 0 {
			t.Fatalf("the completed BroadcastJob is back: %+v", jobs.Items)
		}
	}
	if st := g.acj().Status; len(st.Active) != 0 || st.LastScheduleTime == nil || st.LastScheduleTime.Unix() != 1741600860 {
		t.Errorf("status %+v", st)
	}
	expectEvents(t, g.rec, ReasonSuccessfulCreate, ReasonSuccessfulDelete)
}

// TestReconcileImageListPullJob: the template's spec goes to the ImageListPullJob; it is running
// until its completionTime.
func TestReconcileImageListPullJob(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	acj := newACJ("*/1 * * * *", created)
	acj.Spec.Template.JobTemplate = nil
	acj.Spec.Template.ImageListPullJobTemplate = &v1beta1.AdvancedCronJobImageListPullJobTemplate{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}},
		Spec:       v1beta1.ImageListPullJobSpec{Images: []string{"nginx:1.25", "busybox:1.36"}}}
	acj.Spec.ConcurrencyPolicy = v1beta1.AdvancedCronJobForbidConcurrent
	g := newRig(t, acj, at(t, "2025-03-10T10:01:01Z"))
	g.reconcile()
	jobs := &v1beta1.ImageListPullJobList{}
	g.list(jobs)
	if len(jobs.Items) != 1 || len(jobs.Items[0].Spec.Images) != 2 || jobs.Items[0].Labels["team"] != "a" {
		t.Fatalf("image list pull jobs %+v", jobs.Items)
	}
	g.clk.SetTime(at(t, "2025-03-10T10:02:01Z"))
	g.reconcile()
	g.list(jobs)
	if len(jobs.Items) != 1 {
		t.Fatalf("Forbid with a running ImageListPullJob: %d jobs", len(jobs.Items))
	}
	j := jobs.Items[0]
	j.Status = v1beta1.ImageListPullJobStatus{Desired: 2, Succeeded: 2, CompletionTime: ptr.To(metav1.NewTime(g.clk.Now()))}
	if err := g.c.Status().Update(context.Background(), &j); err != nil {
		t.Fatal(err)
	}
	g.reconcile() // the 10:02 tick is still due: it runs late, now that nothing runs
	g.list(jobs)
	if len(jobs.Items) != 2 || g.acj().Status.Active[0].Name != "cj-1741600920" {
		t.Fatalf("after completion: jobs %d, status %+v", len(jobs.Items), g.acj().Status)
	}
	expectEvents(t, g.rec, ReasonSuccessfulCreate, ReasonJobAlreadyActive, ReasonSuccessfulCreate)
}

// TestReconcileWaitsForTheCache: under Forbid, a child created but not yet in the cache blocks
// the next tick for a while instead of letting two children run.
func TestReconcileWaitsForTheCache(t *testing.T) {
	created := at(t, "2025-03-10T10:00:30Z")
	acj := newACJ("*/1 * * * *", created)
	acj.Spec.ConcurrencyPolicy = v1beta1.AdvancedCronJobForbidConcurrent
	s := snap(acj)
	s.Created, s.PendingUntil = at(t, "2025-03-10T10:01:00Z"), at(t, "2025-03-10T10:02:10Z")
	p := plan(s, at(t, "2025-03-10T10:02:01Z"), utc)
	if !p.Run.IsZero() || p.RequeueAfter != 9*time.Second {
		t.Errorf("pending: run %v, requeue after %v", p.Run, p.RequeueAfter)
	}
	if p := plan(s, at(t, "2025-03-10T10:02:11Z"), utc); fmtTime(p.Run) != "2025-03-10T10:02:00Z" {
		t.Errorf("after the wait: run %v", p.Run)
	}
	acj.Spec.ConcurrencyPolicy = v1beta1.AdvancedCronJobAllowConcurrent
	if p := plan(s, at(t, "2025-03-10T10:02:01Z"), utc); fmtTime(p.Run) != "2025-03-10T10:02:00Z" {
		t.Errorf("Allow: run %v", p.Run)
	}
}

func expectEvents(t *testing.T, rec *events.FakeRecorder, reasons ...string) {
	t.Helper()
	for _, want := range reasons {
		select {
		case e := <-rec.Events:
			if !strings.Contains(e, want) {
				t.Errorf("event %q, want reason %s", e, want)
			}
		default:
			t.Errorf("no event, want reason %s", want)
		}
	}
}
