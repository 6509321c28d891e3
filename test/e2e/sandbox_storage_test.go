package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/app/sandbox/storage"
	"github.com/kruise-ng/kruise/test/harness"
)

// newClaim is a ReadWriteOnce claim of size in class (nil: the default class).
func newClaim(ns, name, size string, class *string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
}

// waitClaim waits until the claim satisfies cond and returns it.
func waitClaim(t *testing.T, ns, name, what string, cond func(*corev1.PersistentVolumeClaim) bool) *corev1.PersistentVolumeClaim {
	t.Helper()
	var last *corev1.PersistentVolumeClaim
	harness.Eventually(t, 60*time.Second, fmt.Sprintf("claim %s/%s %s", ns, name, what), func() (bool, string) {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		last = pvc
		c := pvc.Status.Capacity[corev1.ResourceStorage]
		return cond(pvc), fmt.Sprintf("phase=%s volume=%q capacity=%s conditions=%v", pvc.Status.Phase, pvc.Spec.VolumeName, c.String(), pvc.Status.Conditions)
	})
	return last
}

func bound(pvc *corev1.PersistentVolumeClaim) bool { return pvc.Status.Phase == corev1.ClaimBound }

func capacity(pvc *corev1.PersistentVolumeClaim) string {
	c := pvc.Status.Capacity[corev1.ResourceStorage]
	return c.String()
}

// Every sandbox provisions volumes: a claim of the default class is bound to a hostPath volume of
// its size, made on disk under the sandbox; a claim of "expandable" grows when asked to, one of
// "standard" cannot (the API server refuses); a deleted claim's volume and folder go.
func TestSandboxStorage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	claims := cs.CoreV1().PersistentVolumeClaims(ns)

	if _, err := claims.Create(ctx, newClaim(ns, "plain", "1Mi", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := claims.Create(ctx, newClaim(ns, "grows", "1Mi", ptr.To(storage.ExpandableClass)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := waitClaim(t, ns, "plain", "Bound", bound)
	if got := ptr.Deref(plain.Spec.StorageClassName, ""); got != storage.StandardClass {
		t.Errorf("claim without a class got class %q; want the default %q", got, storage.StandardClass)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, plain.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := pv.Spec.Capacity[corev1.ResourceStorage]; c.String() != "1Mi" || capacity(plain) != "1Mi" {
		t.Errorf("volume of %s, claim capacity %s; want both the request, 1Mi", c.String(), capacity(plain))
	}
	if pv.Spec.HostPath == nil || filepath.Dir(pv.Spec.HostPath.Path) != sb.VolumesDir() {
		t.Fatalf("volume source %+v; want a hostPath folder in %s", pv.Spec.PersistentVolumeSource, sb.VolumesDir())
	}
	dir := pv.Spec.HostPath.Path
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("the volume's folder %s is not on disk: %v", dir, err)
	}

	// "expandable": 1Mi -> 2Mi, and status.capacity follows.
	waitClaim(t, ns, "grows", "Bound", bound)
	patch := []byte(`{"spec":{"resources":{"requests":{"storage":"2Mi"}}}}`)
	if _, err := claims.Patch(ctx, "grows", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("growing a claim of %s: %v", storage.ExpandableClass, err)
	}
	grown := waitClaim(t, ns, "grows", "at capacity 2Mi", func(pvc *corev1.PersistentVolumeClaim) bool { return capacity(pvc) == "2Mi" })
	for _, c := range grown.Status.Conditions {
		switch c.Type {
		case corev1.PersistentVolumeClaimResizing, corev1.PersistentVolumeClaimFileSystemResizePending,
			corev1.PersistentVolumeClaimControllerResizeError, corev1.PersistentVolumeClaimNodeResizeError:
			t.Errorf("a finished resize left condition %s=%s (%s)", c.Type, c.Status, c.Message)
		}
	}
	if len(grown.Status.AllocatedResourceStatuses) != 0 {
		t.Errorf("a finished resize left resize statuses %v", grown.Status.AllocatedResourceStatuses)
	}
	if gpv, err := cs.CoreV1().PersistentVolumes().Get(ctx, grown.Spec.VolumeName, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if c := gpv.Spec.Capacity[corev1.ResourceStorage]; c.String() != "2Mi" {
		t.Errorf("volume of the grown claim has %s; want 2Mi", c.String())
	}

	// "standard": the API server refuses a larger request.
	_, err = claims.Patch(ctx, "plain", types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("growing a claim of %s: err = %v; want Forbidden", storage.StandardClass, err)
	}

	// A deleted claim's volume is deleted (class reclaim policy Delete), and its folder removed.
	if err := claims.Delete(ctx, "plain", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the deleted claim's volume and folder gone", func() (bool, string) {
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, plain.Spec.VolumeName, metav1.GetOptions{})
		_, statErr := os.Stat(dir)
		if err == nil {
			return false, fmt.Sprintf("volume %s phase %s", pv.Name, pv.Status.Phase)
		}
		return apierrors.IsNotFound(err) && os.IsNotExist(statErr), fmt.Sprintf("volume: %v; folder: %v", err, statErr)
	})
}

// On kwok nodes a Job's pod runs to completion (Succeeded, exit code 0) and the Job completes; a
// pod annotated sandbox.kruise.io/exit-code fails with that code (restartPolicy Never) or restarts
// its containers (OnFailure, until the Job gives up); a pod of an image from
// invalid.registry.k8s.io never runs.
func TestSandboxPodsExit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "once"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec("registry.example/task:v1")}}}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	crashing := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "crashing"},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](1), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{sandbox.ExitCodeAnnotation: "1"}},
			Spec:       podSpec("registry.example/task:v1")}}}
	crashing.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	for _, j := range []*batchv1.Job{job, crashing} {
		if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	failing := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "failing",
		Annotations: map[string]string{sandbox.ExitCodeAnnotation: "1"}}, Spec: podSpec("registry.example/task:v1")}
	failing.Spec.RestartPolicy = corev1.RestartPolicyNever
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: podSpec("invalid.registry.k8s.io/task:v1")}
	for _, p := range []*corev1.Pod{failing, bad} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	waitJob(t, ns, "once", batchv1.JobComplete)
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=once"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("the Job has %d pods; want one", len(pods.Items))
	}
	if p := pods.Items[0]; p.Status.Phase != corev1.PodSucceeded || !exited(&p, 0, "Completed") ||
		condition(&p, corev1.PodReady) != corev1.ConditionFalse {
		t.Errorf("the Job's pod did not end as a kubelet reports success: %s", describeExit(&p))
	}

	f := waitPod(t, ns, "failing", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if !exited(f, 1, "Error") {
		t.Errorf("the annotated pod did not exit with code 1, reason Error: %s", describeExit(f))
	}

	// OnFailure: the containers restart in the pod, counted against the Job's backoff limit.
	if j := waitJob(t, ns, "crashing", batchv1.JobFailed); j.Status.Succeeded != 0 {
		t.Errorf("the crashing Job has %d succeeded pods", j.Status.Succeeded)
	}

	b := waitPod(t, ns, "bad", "waiting in ImagePullBackOff", func(p *corev1.Pod) bool {
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "ImagePullBackOff"
	})
	if b.Status.Phase != corev1.PodPending || b.Status.ContainerStatuses[0].Ready {
		t.Errorf("a pod of an invalid.registry.k8s.io image runs: %s", describe(b))
	}
}

// waitJob waits until the Job has condition typ True and returns it.
func waitJob(t *testing.T, ns, name string, typ batchv1.JobConditionType) *batchv1.Job {
	t.Helper()
	var last *batchv1.Job
	harness.Eventually(t, 60*time.Second, fmt.Sprintf("Job %s/%s %s", ns, name, typ), func() (bool, string) {
		j, err := cs.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		last = j
		for _, c := range j.Status.Conditions {
			if c.Type == typ && c.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprintf("succeeded=%d failed=%d active=%d conditions=%v", j.Status.Succeeded, j.Status.Failed, j.Status.Active, j.Status.Conditions)
	})
	return last
}

// exited reports whether every container of pod terminated with code and reason.
func exited(pod *corev1.Pod, code int32, reason string) bool {
	for _, c := range pod.Status.ContainerStatuses {
		if term := c.State.Terminated; term == nil || term.ExitCode != code || term.Reason != reason || c.Ready {
			return false
		}
	}
	return len(pod.Status.ContainerStatuses) > 0
}

func describeExit(pod *corev1.Pod) string {
	s := describe(pod)
	for _, c := range pod.Status.ContainerStatuses {
		if term := c.State.Terminated; term != nil {
			s += fmt.Sprintf(" [%s terminated: code %d reason %s]", c.Name, term.ExitCode, term.Reason)
		}
	}
	return s
}
