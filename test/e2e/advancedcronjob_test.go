package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/controller/advancedcronjob"
	"github.com/kruise-ng/kruise/test/harness"
)

// acjTick is how long a case may wait for the next minute's tick: a minute, plus the time the
// controller and the API server take.
const acjTick = 80 * time.Second

// acjJobTemplate is a Job whose pod exits 0 a second or two after it starts (pod-exit stage);
// with pending set, its pod never schedules, so the Job runs until deleted.
func acjJobTemplate(pending bool) *batchv1.JobTemplateSpec {
	pod := podSpec("registry.example/cron:v1")
	pod.RestartPolicy = corev1.RestartPolicyNever
	if pending {
		pod.NodeSelector = map[string]string{"e2e.kruise.io/no-such-node": "true"}
	}
	return &batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cron": "e2e"}, Annotations: map[string]string{"note": "from the template"}},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: pod}}}
}

// acjBroadcastTemplate is a BroadcastJob of pods that exit 0 (pod-exit stage) under completion.
func acjBroadcastTemplate(completion appsv1beta1.BroadcastJobCompletionPolicyType) *appsv1beta1.AdvancedCronJobBroadcastJobTemplate {
	pod := podSpec("registry.example/cron:v1")
	pod.RestartPolicy = corev1.RestartPolicyNever
	return &appsv1beta1.AdvancedCronJobBroadcastJobTemplate{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cron": "e2e"}},
		Spec: appsv1beta1.BroadcastJobSpec{CompletionPolicy: appsv1beta1.BroadcastJobCompletionPolicy{Type: completion},
			Template: corev1.PodTemplateSpec{Spec: pod}}}
}

func newCronJob(ns, name, schedule string, tmpl appsv1beta1.AdvancedCronJobTemplate) *appsv1beta1.AdvancedCronJob {
	return &appsv1beta1.AdvancedCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1beta1.AdvancedCronJobSpec{Schedule: schedule, Template: tmpl}}
}

func acjCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
}

// acjWait waits until the cron job satisfies cond and returns it.
func acjWait(t *testing.T, c client.Client, ns, name, what string, timeout time.Duration, cond func(*appsv1beta1.AdvancedCronJob) bool) *appsv1beta1.AdvancedCronJob {
	t.Helper()
	acj := &appsv1beta1.AdvancedCronJob{}
	harness.Eventually(t, timeout, what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, acj); err != nil {
			return false, err.Error()
		}
		return cond(acj), fmt.Sprintf("status %+v; events: %s", acj.Status, eventNotes(t, ns))
	})
	return acj
}

// acjChildren are the cron job's children of list's kind that are not being deleted, by name.
func acjChildren(t *testing.T, c client.Client, ns string, list client.ObjectList) []string {
	t.Helper()
	if err := c.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range acjItems(t, list) {
		if o.GetDeletionTimestamp() == nil {
			out = append(out, o.GetName())
		}
	}
	slices.Sort(out)
	return out
}

func acjItems(t *testing.T, list client.ObjectList) []client.Object {
	var out []client.Object
	switch l := list.(type) {
	case *batchv1.JobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1beta1.BroadcastJobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *appsv1beta1.ImageListPullJobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		t.Fatalf("unknown list %T", list)
	}
	return out
}

// acjWatchCreations records, from now on, every Job created in ns; a name created twice is a
// tick run twice.
func acjWatchCreations(t *testing.T, ns string) (jobs func() []*batchv1.Job) {
	t.Helper()
	w, err := cs.BatchV1().Jobs(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	got := make(chan *batchv1.Job, 100)
	go func() {
		defer close(got)
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added {
				got <- ev.Object.(*batchv1.Job)
			}
		}
	}()
	var seen []*batchv1.Job
	return func() []*batchv1.Job {
		for {
			select {
			case n, ok := <-got:
				if !ok {
					return seen
				}
				seen = append(seen, n)
			default:
				return seen
			}
		}
	}
}

// acjCheckChild checks what OpenKruise writes on a child: its name, its scheduled-at annotation
// (in zone when given), the template's labels, the cron job as its controller. Only a
// jobTemplate's labels are checked: the CRD, as OpenKruise's, declares the metadata of the
// other templates with no fields, so the API server prunes their labels before any controller
// sees them.
func acjCheckChild(t *testing.T, acj *appsv1beta1.AdvancedCronJob, o client.Object, zone *time.Location) time.Time {
	t.Helper()
	raw := o.GetAnnotations()[advancedcronjob.ScheduledAtAnnotation]
	at, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		t.Fatalf("%s: scheduled-at %q: %v", o.GetName(), raw, err)
	}
	if want := fmt.Sprintf("%s-%d", acj.Name, at.Unix()); o.GetName() != want || at.Second() != 0 {
		t.Errorf("child %s for the tick %s, want the name %s", o.GetName(), raw, want)
	}
	if zone != nil && raw != at.In(zone).Format(time.RFC3339) {
		t.Errorf("scheduled-at %q, want it in %s (%s)", raw, zone, at.In(zone).Format(time.RFC3339))
	}
	if _, isJob := o.(*batchv1.Job); isJob && o.GetLabels()["cron"] != "e2e" {
		t.Errorf("%s: labels %v lack the template's", o.GetName(), o.GetLabels())
	}
	if ref := metav1.GetControllerOf(o); ref == nil || ref.Kind != "AdvancedCronJob" || ref.Name != acj.Name || ref.UID != acj.UID {
		t.Errorf("%s: controller %+v", o.GetName(), ref)
	}
	return at
}

func acjEvent(t *testing.T, ns, reason string) bool {
	t.Helper()
	evs, err := cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(evs.Items, func(e eventsv1.Event) bool { return e.Reason == reason })
}

// TestAdvancedCronJob runs AdvancedCronJobs of each template kind on a one-minute schedule. The
// cases mostly wait for ticks, so they all run at once: each subtest is started from its own
// goroutine (t.Run may be called concurrently), which, unlike t.Parallel, is not held to
// -test.parallel (GOMAXPROCS, 2 on a small machine). The whole test takes about two ticks.
func TestAdvancedCronJob(t *testing.T) {
	t.Parallel() // mostly waiting for the minute's ticks
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200 // every case polls at once
	c := harness.KruiseClient(t, cfg)
	type acjCase struct {
		name string
		run  func(*testing.T, client.Client)
	}
	cases := []acjCase{
		{"Job", acjJob},
		{"BroadcastJob", acjBroadcastJob},
		{"ImageListPullJob", acjImageListPullJob},
		{"PauseResume", acjPauseResume},
		{"TimeZone", acjTimeZone},
		{"TooManyMissed", acjTooManyMissed},
		{"Webhook", acjWebhook},
		{"ReplaceBroadcastJob", acjReplaceBroadcastJob},
	}
	for _, policy := range []appsv1beta1.AdvancedCronJobConcurrencyPolicy{appsv1beta1.AdvancedCronJobAllowConcurrent,
		appsv1beta1.AdvancedCronJobForbidConcurrent, appsv1beta1.AdvancedCronJobReplaceConcurrent} {
		cases = append(cases, acjCase{"Concurrency" + string(policy), func(t *testing.T, c client.Client) { acjConcurrency(t, c, policy) }})
	}
	var wg sync.WaitGroup
	for _, tc := range cases {
		wg.Go(func() { t.Run(tc.name, func(t *testing.T) { tc.run(t, c) }) })
	}
	wg.Wait()
}

// A tick makes one Job, named, annotated and owned as OpenKruise's; it completes, leaves
// status.active, and — with successfulJobsHistoryLimit 0 — is deleted and never made again
// (kruise#862).
func acjJob(t *testing.T, c client.Client) {
	ns := namespace(t)
	created := acjWatchCreations(t, ns)
	acj := newCronJob(ns, "job", "*/1 * * * *", appsv1beta1.AdvancedCronJobTemplate{JobTemplate: acjJobTemplate(false)})
	acj.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](0)
	acjCreate(t, c, acj)
	acj = acjWait(t, c, ns, "job", "a Job started", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool {
		return a.Status.LastScheduleTime != nil && a.Status.Type == appsv1beta1.AdvancedCronJobJobTemplateKind
	})
	name := fmt.Sprintf("job-%d", acj.Status.LastScheduleTime.Unix())
	var job *batchv1.Job
	harness.Eventually(t, 10*time.Second, "the Job's creation watched", func() (bool, string) {
		jobs := created()
		if len(jobs) > 0 {
			job = jobs[0]
		}
		return job != nil, fmt.Sprint(len(jobs))
	})
	acjCheckChild(t, acj, job, nil)
	if job.Name != name || job.Annotations["note"] != "from the template" || job.Spec.Template.Spec.Containers[0].Image != "registry.example/cron:v1" {
		t.Errorf("job %s: annotations %v, spec %+v", job.Name, job.Annotations, job.Spec.Template.Spec)
	}
	harness.Eventually(t, 60*time.Second, "the Job completed and pruned", func() (bool, string) {
		jobs := acjChildren(t, c, ns, &batchv1.JobList{})
		a := &appsv1beta1.AdvancedCronJob{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(acj), a); err != nil {
			return false, err.Error()
		}
		return !slices.Contains(jobs, name) && len(a.Status.Active) == 0, fmt.Sprintf("jobs %v, active %v", jobs, a.Status.Active)
	})
	// Until the next tick, the pruned Job's tick does not run again.
	harness.Consistently(t, time.Until(acj.Status.LastScheduleTime.Add(55*time.Second)), "no Job made twice", func() (bool, string) {
		var names []string
		for _, j := range created() {
			names = append(names, j.Name)
		}
		for i, n := range names {
			if slices.Contains(names[:i], n) {
				return false, fmt.Sprintf("%s created twice: %v", n, names)
			}
		}
		return len(names) <= 1, fmt.Sprint(names)
	})
}

// A tick makes a BroadcastJob; deleting it (as its TTL would) does not make it again
// (kruise#1488, #2213).
func acjBroadcastJob(t *testing.T, c client.Client) {
	ns := namespace(t)
	acj := newCronJob(ns, "bcast", "*/1 * * * *", appsv1beta1.AdvancedCronJobTemplate{
		BroadcastJobTemplate: acjBroadcastTemplate(appsv1beta1.BroadcastJobCompletionPolicyAlways)})
	acjCreate(t, c, acj)
	acj = acjWait(t, c, ns, "bcast", "a BroadcastJob started", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool {
		return a.Status.LastScheduleTime != nil && a.Status.Type == appsv1beta1.AdvancedCronJobBroadcastJobTemplateKind
	})
	bj := &appsv1beta1.BroadcastJob{}
	name := fmt.Sprintf("bcast-%d", acj.Status.LastScheduleTime.Unix())
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, bj); err != nil {
		t.Fatal(err)
	}
	acjCheckChild(t, acj, bj, nil)
	if bj.Spec.CompletionPolicy.Type != appsv1beta1.BroadcastJobCompletionPolicyAlways || bj.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("broadcast job spec %+v", bj.Spec)
	}
	if err := c.Delete(context.Background(), bj); err != nil {
		t.Fatal(err)
	}
	harness.Consistently(t, time.Until(acj.Status.LastScheduleTime.Add(55*time.Second)), "the deleted BroadcastJob not made again", func() (bool, string) {
		got := acjChildren(t, c, ns, &appsv1beta1.BroadcastJobList{})
		return !slices.Contains(got, name), fmt.Sprint(got)
	})
}

// A tick makes an ImageListPullJob from the template's spec.
func acjImageListPullJob(t *testing.T, c client.Client) {
	ns := namespace(t)
	acj := newCronJob(ns, "pull", "*/1 * * * *", appsv1beta1.AdvancedCronJobTemplate{
		ImageListPullJobTemplate: &appsv1beta1.AdvancedCronJobImageListPullJobTemplate{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"cron": "e2e"}},
			// One shared node: the pulls stay off the private nodes tests running beside this one make.
			Spec: appsv1beta1.ImageListPullJobSpec{Images: []string{"registry.example/a:v1", "registry.example/b:v1"},
				ImagePullJobTemplate: appsv1beta1.ImagePullJobTemplate{Selector: &appsv1beta1.ImagePullJobNodeSelector{Names: []string{sandbox.FakeNodeName(0)}}}}}})
	acjCreate(t, c, acj)
	acj = acjWait(t, c, ns, "pull", "an ImageListPullJob started", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool {
		return a.Status.LastScheduleTime != nil && a.Status.Type == appsv1beta1.AdvancedCronJobImageListPullJobTemplateKind
	})
	list := &appsv1beta1.ImageListPullJob{}
	name := fmt.Sprintf("pull-%d", acj.Status.LastScheduleTime.Unix())
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, list); err != nil {
		t.Fatal(err)
	}
	acjCheckChild(t, acj, list, nil)
	if !slices.Equal(list.Spec.Images, []string{"registry.example/a:v1", "registry.example/b:v1"}) {
		t.Errorf("images %v", list.Spec.Images)
	}
}

// A paused cron job starts nothing through a tick; resumed, it starts the tick it missed at once.
func acjPauseResume(t *testing.T, c client.Client) {
	ns := namespace(t)
	acj := newCronJob(ns, "paused", "*/1 * * * *", appsv1beta1.AdvancedCronJobTemplate{JobTemplate: acjJobTemplate(false)})
	acj.Spec.Paused = ptr.To(true)
	acjCreate(t, c, acj)
	tick := acj.CreationTimestamp.Truncate(time.Minute).Add(time.Minute)
	harness.Consistently(t, time.Until(tick.Add(5*time.Second)), "no Job while paused", func() (bool, string) {
		got := acjChildren(t, c, ns, &batchv1.JobList{})
		return len(got) == 0, fmt.Sprint(got)
	})
	resumed := time.Now()
	if err := c.Patch(context.Background(), acj, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`))); err != nil {
		t.Fatal(err)
	}
	acj = acjWait(t, c, ns, "paused", "the missed tick started on resume", 15*time.Second, func(a *appsv1beta1.AdvancedCronJob) bool {
		return a.Status.LastScheduleTime != nil
	})
	if lst := acj.Status.LastScheduleTime.Time; lst.Before(tick) || lst.After(resumed) {
		t.Errorf("resumed at %v: ran the tick %v, want the one missed at %v or a later one before the resume", resumed, lst, tick)
	}
	if time.Since(resumed) > 15*time.Second {
		t.Errorf("the missed tick started %v after the resume", time.Since(resumed))
	}
}

// A schedule read in spec.timeZone: "every minute of these two hours" in Asia/Kathmandu
// (UTC+05:45) fires now only if the zone is honoured (no whole-hour zone shares its hours).
func acjTimeZone(t *testing.T, c client.Client) {
	ns := namespace(t)
	zone, err := time.LoadLocation("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	h := time.Now().In(zone).Hour()
	schedule := fmt.Sprintf("* %d,%d * * *", h, (h+1)%24)
	acj := newCronJob(ns, "zoned", schedule, appsv1beta1.AdvancedCronJobTemplate{JobTemplate: acjJobTemplate(false)})
	acj.Spec.TimeZone = ptr.To("Asia/Kathmandu")
	acjCreate(t, c, acj)
	acj = acjWait(t, c, ns, "zoned", "a Job started on Kathmandu's clock", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool {
		return a.Status.LastScheduleTime != nil
	})
	job, err := cs.BatchV1().Jobs(ns).Get(context.Background(), fmt.Sprintf("zoned-%d", acj.Status.LastScheduleTime.Unix()), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if at := acjCheckChild(t, acj, job, zone); !strings.HasSuffix(job.Annotations[advancedcronjob.ScheduledAtAnnotation], "+05:45") {
		t.Errorf("scheduled-at %v not on Kathmandu's clock", at)
	}
}

// B3: a cron job whose last run is three hours (180 ticks) ago starts the most recent tick and
// says it missed many, where OpenKruise stops with "too many missed start times".
func acjTooManyMissed(t *testing.T, c client.Client) {
	ns := namespace(t)
	acj := newCronJob(ns, "late", "*/1 * * * *", appsv1beta1.AdvancedCronJobTemplate{JobTemplate: acjJobTemplate(false)})
	acj.Spec.Paused = ptr.To(true)
	acjCreate(t, c, acj)
	past := metav1.NewTime(time.Now().Add(-3 * time.Hour).Truncate(time.Minute))
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		a := &appsv1beta1.AdvancedCronJob{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(acj), a); err != nil {
			return err
		}
		a.Status.LastScheduleTime = &past
		return c.Status().Update(context.Background(), a)
	}); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	if err := c.Patch(context.Background(), acj, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"paused":false}}`))); err != nil {
		t.Fatal(err)
	}
	acj = acjWait(t, c, ns, "late", "the most recent tick started", 15*time.Second, func(a *appsv1beta1.AdvancedCronJob) bool {
		return a.Status.LastScheduleTime != nil && a.Status.LastScheduleTime.After(past.Time)
	})
	if lst := acj.Status.LastScheduleTime.Time; resumed.Sub(lst) > time.Minute || lst.After(time.Now()) {
		t.Errorf("resumed at %v: ran the tick %v, want the most recent one", resumed, lst)
	}
	if _, err := cs.BatchV1().Jobs(ns).Get(context.Background(), fmt.Sprintf("late-%d", acj.Status.LastScheduleTime.Unix()), metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 10*time.Second, "a TooManyMissedTimes event", func() (bool, string) {
		return acjEvent(t, ns, advancedcronjob.ReasonTooManyMissedTimes), eventNotes(t, ns)
	})
}

// Each concurrency policy with a Job that runs until deleted, over two ticks: Allow runs both,
// Forbid skips the second, Replace deletes the first and runs the second.
func acjConcurrency(t *testing.T, c client.Client, policy appsv1beta1.AdvancedCronJobConcurrencyPolicy) {
	ns := namespace(t)
	acj := newCronJob(ns, "policy", "*/1 * * * *", appsv1beta1.AdvancedCronJobTemplate{JobTemplate: acjJobTemplate(true)})
	acj.Spec.ConcurrencyPolicy = policy
	acjCreate(t, c, acj)
	first := acjWait(t, c, ns, "policy", "the first Job", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool { return len(a.Status.Active) == 1 })
	firstName := first.Status.Active[0].Name
	second := first.Status.LastScheduleTime.Add(time.Minute)
	switch policy {
	case appsv1beta1.AdvancedCronJobAllowConcurrent:
		acjWait(t, c, ns, "policy", "both Jobs running", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool { return len(a.Status.Active) == 2 })
		if got := acjChildren(t, c, ns, &batchv1.JobList{}); len(got) != 2 {
			t.Errorf("jobs %v", got)
		}
	case appsv1beta1.AdvancedCronJobForbidConcurrent:
		harness.Consistently(t, time.Until(second.Add(10*time.Second)), "only the first Job through the second tick", func() (bool, string) {
			got := acjChildren(t, c, ns, &batchv1.JobList{})
			return slices.Equal(got, []string{firstName}), fmt.Sprint(got)
		})
		if !acjEvent(t, ns, advancedcronjob.ReasonJobAlreadyActive) {
			t.Errorf("no JobAlreadyActive event: %s", eventNotes(t, ns))
		}
	case appsv1beta1.AdvancedCronJobReplaceConcurrent:
		a := acjWait(t, c, ns, "policy", "the second Job replacing the first", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool {
			return len(a.Status.Active) == 1 && a.Status.Active[0].Name != firstName
		})
		harness.Eventually(t, 30*time.Second, "the first Job gone", func() (bool, string) {
			got := acjChildren(t, c, ns, &batchv1.JobList{})
			return slices.Equal(got, []string{a.Status.Active[0].Name}), fmt.Sprint(got)
		})
	}
}

// Replace with a BroadcastJob that never completes: the second tick deletes the first.
func acjReplaceBroadcastJob(t *testing.T, c client.Client) {
	ns := namespace(t)
	acj := newCronJob(ns, "forever", "*/1 * * * *", appsv1beta1.AdvancedCronJobTemplate{
		BroadcastJobTemplate: acjBroadcastTemplate(appsv1beta1.BroadcastJobCompletionPolicyNever)})
	acj.Spec.ConcurrencyPolicy = appsv1beta1.AdvancedCronJobReplaceConcurrent
	acjCreate(t, c, acj)
	first := acjWait(t, c, ns, "forever", "the first BroadcastJob", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool { return len(a.Status.Active) == 1 })
	firstName := first.Status.Active[0].Name
	a := acjWait(t, c, ns, "forever", "the second BroadcastJob replacing the first", acjTick, func(a *appsv1beta1.AdvancedCronJob) bool {
		return len(a.Status.Active) == 1 && a.Status.Active[0].Name != firstName
	})
	harness.Eventually(t, 30*time.Second, "the first BroadcastJob gone", func() (bool, string) {
		got := acjChildren(t, c, ns, &appsv1beta1.BroadcastJobList{})
		return slices.Equal(got, []string{a.Status.Active[0].Name}), fmt.Sprint(got)
	})
}

// The validating webhook refuses OpenKruise's invalid cron jobs at their fields, in both versions,
// and a change of the template.
func acjWebhook(t *testing.T, c client.Client) {
	ctx := context.Background()
	ns := namespace(t)
	tmpl := appsv1beta1.AdvancedCronJobTemplate{JobTemplate: acjJobTemplate(false)}
	for _, bad := range []struct {
		name   string
		mutate func(*appsv1beta1.AdvancedCronJob)
		field  string
	}{
		{"schedule", func(a *appsv1beta1.AdvancedCronJob) { a.Spec.Schedule = "every minute" }, "spec.schedule"},
		{"zone", func(a *appsv1beta1.AdvancedCronJob) { a.Spec.TimeZone = ptr.To("Mars/Olympus_Mons") }, "spec.timeZone"},
		{"two-templates", func(a *appsv1beta1.AdvancedCronJob) {
			a.Spec.Template.BroadcastJobTemplate = acjBroadcastTemplate(appsv1beta1.BroadcastJobCompletionPolicyAlways)
		}, "spec.template"},
		{"restart-always", func(a *appsv1beta1.AdvancedCronJob) {
			a.Spec.Template.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, "spec.template.jobTemplate.spec.template.spec.restartPolicy"},
		{strings.Repeat("n", 53), func(*appsv1beta1.AdvancedCronJob) {}, "metadata.name"},
	} {
		acj := newCronJob(ns, bad.name, "*/1 * * * *", *tmpl.DeepCopy())
		bad.mutate(acj)
		err := c.Create(ctx, acj)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), bad.field) {
			t.Errorf("%s: %v; want 422 Invalid at %s", bad.name, err, bad.field)
		}
	}
	alpha := &appsv1alpha1.AdvancedCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "alpha"},
		Spec: appsv1alpha1.AdvancedCronJobSpec{Schedule: "0 0 1 1 *", Template: appsv1alpha1.AdvancedCronJobTemplate{JobTemplate: acjJobTemplate(false)}}}
	acjCreate(t, c, alpha)
	if err := c.Patch(ctx, alpha, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"schedule":"0 0 2 1 *"}}`))); err != nil {
		t.Errorf("v1alpha1 schedule change: %v", err)
	}
	err := c.Patch(ctx, alpha, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"template":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/cron:v2"}]}}}}}}}`)))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template") {
		t.Errorf("v1alpha1 template change: %v; want 422 Invalid at spec.template", err)
	}
}
