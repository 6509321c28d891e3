package cli

import (
	"context"
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// create ContainerRecreateRequest (crr) asks for the pod's containers (all, or --containers) with
// the strategy kruise-tools' requests have (-u and -m honoured), naming only the containers: the
// webhook fills in their preStop hooks and ports. A container the pod lacks is refused.
func TestCreateContainerRecreateRequest(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}, {Name: "log"}}}}
	env, c, _ := fakeEnv(t, pod)
	get := func(name string) *appsv1alpha1.ContainerRecreateRequest {
		t.Helper()
		crr := &appsv1alpha1.ContainerRecreateRequest{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, crr); err != nil {
			t.Fatal(err)
		}
		return crr
	}
	if out, err := kubectlKruise(env, "create", "ContainerRecreateRequest", "r1", "--pod=web-0"); err != nil ||
		!strings.Contains(out, "containerrecreaterequest.apps.kruise.io/r1 created") {
		t.Fatalf("create crr: %v\n%s", err, out)
	}
	want := appsv1alpha1.ContainerRecreateRequestSpec{PodName: "web-0",
		Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}, {Name: "log"}},
		Strategy: &appsv1alpha1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1alpha1.ContainerRecreateRequestFailurePolicyFail,
			UnreadyGracePeriodSeconds: ptr.To[int64](3), MinStartedSeconds: 3},
		ActiveDeadlineSeconds: ptr.To[int64](300), TTLSecondsAfterFinished: ptr.To[int32](1800)}
	if got := get("r1").Spec; !reflect.DeepEqual(got, want) {
		t.Errorf("spec %+v\nwant %+v", got, want)
	}
	if _, err := kubectlKruise(env, "create", "crr", "r2", "-p", "web-0", "--containers=log", "-u", "0", "-m", "10",
		"--terminationGracePeriodSeconds=30"); err != nil {
		t.Fatal(err)
	}
	if s := get("r2").Spec; len(s.Containers) != 1 || s.Containers[0].Name != "log" || *s.Strategy.UnreadyGracePeriodSeconds != 0 ||
		s.Strategy.MinStartedSeconds != 10 || *s.Strategy.TerminationGracePeriodSeconds != 30 {
		t.Errorf("r2: %+v %+v", s, *s.Strategy)
	}
	if out, err := kubectlKruise(env, "create", "crr", "r3", "--pod=web-0", "--dry-run"); err != nil || !strings.Contains(out, "created (dry run)") {
		t.Errorf("--dry-run: %v\n%s", err, out)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "r3"}, &appsv1alpha1.ContainerRecreateRequest{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run created r3: %v", err)
	}
	wantError(t, env, `pod web-0 has no container "db" (it has app, log)`, "create", "crr", "r4", "--pod=web-0", "--containers=app,db")
	wantError(t, env, "pod web-9 in namespace ns", "create", "crr", "r4", "--pod=web-9")
	wantError(t, env, "--pod names the pod", "create", "crr", "r4")
}

// acj is an AdvancedCronJob of a Job template or, with broadcast, of a BroadcastJob template.
func acj(name string, broadcast bool) *v1beta1.AdvancedCronJob {
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "task", Image: "task:v1"}}}}
	meta := metav1.ObjectMeta{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "n"}}
	a := &v1beta1.AdvancedCronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid")},
		Spec: v1beta1.AdvancedCronJobSpec{Schedule: "@daily"}}
	if broadcast {
		a.Spec.Template.BroadcastJobTemplate = &v1beta1.AdvancedCronJobBroadcastJobTemplate{ObjectMeta: meta,
			Spec: v1beta1.BroadcastJobSpec{Template: pod}}
	} else {
		a.Spec.Template.JobTemplate = &batchv1.JobTemplateSpec{ObjectMeta: meta, Spec: batchv1.JobSpec{Template: pod}}
	}
	return a
}

// create job and create broadcastJob make NAME from --image (the command after --) or from an
// AdvancedCronJob's template of their kind: its labels, annotations and spec, marked instantiated
// by hand and owned, not controlled, by the cron job.
func TestCreateJobs(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly", UID: "cj-uid"}, Spec: batchv1.CronJobSpec{
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "n", Image: "n:v1"}}}}}}}}
	env, c, _ := fakeEnv(t, acj("jobs", false), acj("bcast", true), cj)
	run := func(want string, args ...string) {
		t.Helper()
		if out, err := kubectlKruise(env, args...); err != nil || !strings.Contains(out, want) {
			t.Fatalf("%v: %v\n%s\nwant %q", args, err, out, want)
		}
	}
	run("job.batch/j1 created", "create", "job", "j1", "--image=busybox", "--", "date", "-u")
	run("broadcastjob.apps.kruise.io/b1 created", "create", "broadcastJob", "b1", "--image=busybox")
	run("job.batch/j2 created", "create", "job", "j2", "--from=acj/jobs")
	run("broadcastjob.apps.kruise.io/b2 created", "create", "bcj", "b2", "--from=advancedcronjob/bcast")
	run("job.batch/j3 created", "create", "job", "j3", "--from=cronjob/nightly")

	j1 := &batchv1.Job{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "j1"}, j1); err != nil {
		t.Fatal(err)
	}
	if ct := j1.Spec.Template.Spec.Containers[0]; ct.Name != "j1" || ct.Image != "busybox" || strings.Join(ct.Command, " ") != "date -u" ||
		j1.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("j1: %+v", j1.Spec.Template.Spec)
	}
	for _, obj := range []client.Object{&batchv1.Job{}, &v1beta1.BroadcastJob{}} {
		name, owner := "j2", "jobs"
		if _, ok := obj.(*v1beta1.BroadcastJob); ok {
			name, owner = "b2", "bcast"
		}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		refs := obj.GetOwnerReferences()
		if obj.GetLabels()["team"] != "a" || obj.GetAnnotations()["note"] != "n" || obj.GetAnnotations()[InstantiateAnnotation] != "manual" ||
			len(refs) != 1 || refs[0].Name != owner || refs[0].Kind != "AdvancedCronJob" || refs[0].Controller != nil {
			t.Errorf("%s: labels %v annotations %v owners %+v", name, obj.GetLabels(), obj.GetAnnotations(), refs)
		}
	}
	wantError(t, env, "creates BroadcastJobs, not Jobs: kubectl kruise create broadcastJob", "create", "job", "x", "--from=acj/bcast")
	wantError(t, env, "creates Jobs, not BroadcastJobs", "create", "broadcastjob", "x", "--from=acj/jobs")
	wantError(t, env, "a BroadcastJob is created from an AdvancedCronJob", "create", "broadcastJob", "x", "--from=cronjob/nightly")
	wantError(t, env, "either --image or --from", "create", "job", "x")
	wantError(t, env, "either --image or --from", "create", "job", "x", "--image=a", "--from=acj/jobs")
	wantError(t, env, "give no command with --from", "create", "job", "x", "--from=acj/jobs", "--", "date")
	wantError(t, env, "exactly one NAME", "create", "job", "x", "y", "--image=a")
}
