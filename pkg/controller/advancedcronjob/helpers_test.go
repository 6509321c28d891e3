package advancedcronjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// at parses an RFC 3339 time, failing the test on a typo.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// newACJ is a defaulted cron job "cj" in namespace "ns" with a Job template, created at created.
func newACJ(schedule string, created time.Time) *v1beta1.AdvancedCronJob {
	acj := &v1beta1.AdvancedCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns", UID: "cj-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec: v1beta1.AdvancedCronJobSpec{Schedule: schedule, Template: v1beta1.AdvancedCronJobTemplate{
			JobTemplate: &batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "cj"}, Annotations: map[string]string{"note": "x"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}},
			}}},
	}
	defaults.SetDefaultsAdvancedCronJobV1beta1(acj)
	return acj
}

// kid is a child of "cj" for the tick scheduled, in state, started at start (nil: not started).
func kid(scheduled time.Time, state childState, start *time.Time) child {
	name := ChildName("cj", scheduled)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name + "-uid"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1beta1", Kind: "AdvancedCronJob", Name: "cj", UID: "cj-uid", Controller: ptr.To(true)}},
		Annotations:     map[string]string{ScheduledAtAnnotation: scheduled.Format(time.RFC3339)}}}
	s := scheduled
	return child{Name: name, UID: job.UID, ScheduledAt: &s, StartTime: start, State: state, Object: job}
}

func snap(acj *v1beta1.AdvancedCronJob, children ...child) *snapshot {
	kind, err := templateKind(&acj.Spec.Template)
	return &snapshot{ACJ: acj, Kind: kind, TemplateErr: err, Children: children}
}

var utc = options{Location: time.UTC}

func reasons(p *Plan) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.Reason)
	}
	return out
}

func deleted(p *Plan) []string {
	var out []string
	for _, d := range p.Delete {
		out = append(out, d.Child.Name)
	}
	return out
}
