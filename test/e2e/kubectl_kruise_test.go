package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/cli"
	"github.com/kruise-ng/kruise/test/harness"
)

// kubectlKruise runs the plugin against the sandbox in ns and returns its output and exit code.
func kubectlKruise(t *testing.T, bin, ns string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", sb.Kubeconfig(), "-n", ns}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run kubectl-kruise %v: %v", args, err)
	}
	return out.String(), code
}

// kubectl-kruise drives a CloneSet: set image, rollout status (until done; non-zero when stuck),
// pause/resume, history, undo, scaledown.
func TestKubectlKruise(t *testing.T) {
	t.Parallel()
	bin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	const replicas = 6
	clone := newCloneSet(ns, "cli", replicas, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	clone.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	// OpenKruise counts the deadline from the start of a rollout: ample for the rollouts that
	// succeed; the stuck one below gets a short one.
	clone.Spec.ProgressDeadlineSeconds = ptr.To[int32](120)
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		out, code := kubectlKruise(t, bin, ns, args...)
		if code != want {
			t.Fatalf("kubectl kruise %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
		}
		return out
	}
	if out := run(0, "rollout", "status", "clone/cli"); !strings.Contains(out, `cloneset "cli" successfully rolled out`) {
		t.Errorf("status of the new CloneSet:\n%s", out)
	}
	// TYPE is resolved from the API server's discovery, as kubectl resolves it: deployment and sts
	// are the native kinds, refused naming the Kruise form; clone.apps.kruise.io is the CloneSet.
	for args, says := range map[string]string{"deployment/web": "native apps/v1 Deployment", "sts/web": "asts/NAME"} {
		if out, code := kubectlKruise(t, bin, ns, "rollout", "status", args); code == 0 || !strings.Contains(out, says) {
			t.Errorf("rollout status %s: exit %d, want it refused saying %q\n%s", args, code, says, out)
		}
	}
	if out := run(0, "rollout", "status", "clone.apps.kruise.io", "cli", "--watch=false"); !strings.Contains(out, `cloneset "cli"`) {
		t.Errorf("status by the short name and group:\n%s", out)
	}

	run(0, "set", "image", "clone/cli", "app=registry.example/app:v2")
	out := run(0, "rollout", "status", "clone/cli")
	if !strings.Contains(out, "Waiting for cloneset") || !strings.Contains(out, "successfully rolled out") {
		t.Errorf("status through the rollout should show progress, then success:\n%s", out)
	}
	if out := run(0, "rollout", "history", "clone/cli"); !strings.Contains(out, "app=registry.example/app:v2") ||
		!strings.Contains(out, "app=registry.example/app:v1") || !strings.Contains(out, "update") {
		t.Errorf("history lacks the two revisions:\n%s", out)
	}

	// Pause holds a new image; resume lets it through.
	run(0, "rollout", "pause", "clone/cli")
	run(0, "set", "image", "clone/cli", "app=registry.example/app:v3")
	// A snapshot taken before the controller observed the change says it waits for that.
	harness.Eventually(t, 30*time.Second, "a paused rollout's snapshot says so", func() (bool, string) {
		out := run(0, "rollout", "status", "clone/cli", "--watch=false")
		return strings.Contains(out, "(paused)"), out
	})
	if out := run(0, "rollout", "plan", "clone/cli"); !strings.Contains(out, "update revision") || !strings.Contains(out, "then: waiting:") ||
		!strings.Contains(strings.ToLower(out), "paused") {
		t.Errorf("the plan of a paused rollout should say what it waits for:\n%s", out)
	}
	run(0, "rollout", "resume", "clone/cli")
	run(0, "rollout", "status", "clone/cli")
	if out := run(0, "rollout", "plan", "clone/cli"); !strings.Contains(out, "nothing to do") {
		t.Errorf("the plan of a finished rollout:\n%s", out)
	}

	// Undo goes back to v2, in place.
	if out := run(0, "rollout", "undo", "clone/cli"); !strings.Contains(out, "rolled back") {
		t.Errorf("undo:\n%s", out)
	}
	run(0, "rollout", "status", "clone/cli")
	got := &appsv1alpha1.CloneSet{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(clone), got); err != nil {
		t.Fatal(err)
	}
	if img := got.Spec.Template.Spec.Containers[0].Image; img != "registry.example/app:v2" {
		t.Errorf("after undo the template runs %s, want app:v2", img)
	}

	// Scaledown deletes exactly the named pod.
	pods := podsByName(t, ns, "app=cli")
	var victim string
	for name := range pods {
		victim = name
		break
	}
	run(0, "scaledown", "clone/cli", "--pods", victim)
	waitCloneSet(t, c, ns, "cli", "5 replicas without the named pod", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.Replicas == replicas-1 && cs.Status.ReadyReplicas == replicas-1
	})
	if _, still := podsByName(t, ns, "app=cli")[victim]; still {
		t.Errorf("pod %s survived its scaledown", victim)
	}

	// A stuck rollout makes status fail (exit 2) once its progress deadline passes.
	patchCloneSet(t, c, clone, `{"spec":{"progressDeadlineSeconds":4}}`)
	run(0, "set", "image", "clone/cli", "app=registry.example/app:broken")
	if out := run(2, "rollout", "status", "clone/cli"); !strings.Contains(out, "stuck") {
		t.Errorf("stuck rollout:\n%s", out)
	}
}

// kubectl-kruise drives an Advanced StatefulSet as it drives a CloneSet: set image rolls it out in
// place (every pod keeps its UID) while rollout status follows it to the end, history lists both
// revisions, undo goes back to the first image, and pause and resume flip
// updateStrategy.rollingUpdate.paused. The set is named in each of the forms kubectl-kruise reads.
func TestKubectlKruiseStatefulSet(t *testing.T) {
	t.Parallel()
	bin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := newStatefulSet(ns, "cli", 3, appsv1.ParallelPodManagement)
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	run := func(want int, args ...string) string {
		t.Helper()
		out, code := kubectlKruise(t, bin, ns, args...)
		if code != want {
			t.Fatalf("kubectl kruise %s: exit %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
		}
		return out
	}
	if out := run(0, "rollout", "status", "asts/cli"); !strings.Contains(out, `advanced statefulset "cli" successfully rolled out`) {
		t.Errorf("status of the new set:\n%s", out)
	}
	uids := map[string]types.UID{}
	for name, p := range podsByName(t, ns, "app=cli") {
		uids[name] = p.UID
	}

	run(0, "set", "image", "asts/cli", "app=registry.example/app:v2")
	if out := run(0, "rollout", "status", "statefulset.apps.kruise.io/cli"); !strings.Contains(out, `Waiting for advanced statefulset "cli"`) ||
		!strings.Contains(out, "successfully rolled out") {
		t.Errorf("status through the rollout should show progress, then success:\n%s", out)
	} else {
		t.Logf("rollout status:\n%s", out)
	}
	for name, p := range podsByName(t, ns, "app=cli") {
		if img := p.Spec.Containers[0].Image; uids[name] != p.UID || img != "registry.example/app:v2" {
			t.Errorf("pod %s: UID %s (was %s), image %s; want it updated in place to app:v2", name, p.UID, uids[name], img)
		}
	}
	out := run(0, "rollout", "history", "asts/cli")
	if revs := strings.Count(out, "app=registry.example/app:"); revs != 2 || !strings.Contains(out, "app=registry.example/app:v1") ||
		!strings.Contains(out, "current,update") {
		t.Errorf("history should list 2 revisions, v2 current and update:\n%s", out)
	}

	if out := run(0, "rollout", "undo", "statefulsets.apps.kruise.io/cli"); !strings.Contains(out, "rolled back to revision 1") {
		t.Errorf("undo:\n%s", out)
	}
	run(0, "rollout", "status", "asts/cli")
	got := waitStatefulSet(t, c, ns, "cli", "rolled back", harness.StatefulSetRolledOut(3))
	if img := got.Spec.Template.Spec.Containers[0].Image; img != "registry.example/app:v1" {
		t.Errorf("after undo the template runs %s, want app:v1", img)
	}

	pausedNow := func() bool {
		t.Helper()
		s := &appsv1beta1.StatefulSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(set), s); err != nil {
			t.Fatal(err)
		}
		return s.Spec.UpdateStrategy.RollingUpdate != nil && s.Spec.UpdateStrategy.RollingUpdate.Paused
	}
	if out := run(0, "rollout", "pause", "advancedstatefulset/cli"); !strings.Contains(out, "statefulset.apps.kruise.io/cli paused") || !pausedNow() {
		t.Errorf("pause: rollingUpdate.paused %v\n%s", pausedNow(), out)
	}
	if out := run(0, "rollout", "resume", "asts/cli"); !strings.Contains(out, "statefulset.apps.kruise.io/cli resumed") || pausedNow() {
		t.Errorf("resume: rollingUpdate.paused %v\n%s", pausedNow(), out)
	}
	if out := run(0, "rollout", "plan", "asts/cli"); !strings.Contains(out, "nothing to do") {
		t.Errorf("plan of a rolled-out set:\n%s", out)
	}
}

// kubectl kruise migrate moves a Deployment's pods to a new CloneSet step by step: the ready pods
// of the app never drop below the Deployment's replicas, the Deployment ends at 0 and the CloneSet
// runs them all; a second run resumes (nothing left to do); a CloneSet it did not make is refused.
func TestKubectlKruiseMigrate(t *testing.T) {
	t.Parallel()
	bin, err := harness.BuildCommand("kubectl-kruise")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := namespace(t)
	const replicas = 5
	labels := map[string]string{"app": "legacy"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1), Containers: []corev1.Container{{Name: "app", Image: "legacy:v1"}}}}}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readyPods := func() int {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=legacy"})
		if err != nil {
			return -1
		}
		n := 0
		for i := range pods.Items {
			if pods.Items[i].DeletionTimestamp == nil && harness.PodCondition(&pods.Items[i], corev1.PodReady) == corev1.ConditionTrue {
				n++
			}
		}
		return n
	}
	harness.Eventually(t, 60*time.Second, "the Deployment's pods ready", func() (bool, string) {
		n := readyPods()
		return n == replicas, fmt.Sprint(n, " ready")
	})

	// Sample the app's ready pods through the migration.
	stop := make(chan struct{})
	minReady := make(chan int, 1)
	go func() {
		low := replicas
		for {
			select {
			case <-stop:
				minReady <- low
				return
			case <-time.After(100 * time.Millisecond):
				if n := readyPods(); n >= 0 {
					low = min(low, n)
				}
			}
		}
	}()
	out, code := kubectlKruise(t, bin, ns, "migrate", "--from", "deployment/legacy", "--to", "cloneset/legacy", "--step", "2")
	close(stop)
	if code != 0 || !strings.Contains(out, "step 3/3") || !strings.Contains(out, "migrated: cloneset/legacy runs 5 pod(s)") {
		t.Fatalf("migrate: exit %d\n%s", code, out)
	}
	t.Logf("migrate:\n%s", out)
	if low := <-minReady; low < replicas {
		t.Errorf("ready pods fell to %d during the migration, want never below %d", low, replicas)
	}
	got, err := cs.AppsV1().Deployments(ns).Get(ctx, "legacy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.Replicas != 0 || got.Status.Replicas != 0 {
		t.Errorf("the Deployment has %d replicas (%d pods), want 0", *got.Spec.Replicas, got.Status.Replicas)
	}
	c := kruiseClient(t)
	clone := waitCloneSet(t, c, ns, "legacy", "5 pods available", func(cs *appsv1alpha1.CloneSet) bool {
		return cs.Status.AvailableReplicas == replicas
	})
	if clone.Annotations[cli.MigratedFromAnnotation] != "deployment/legacy" || clone.Spec.Template.Spec.Containers[0].Image != "legacy:v1" {
		t.Errorf("the CloneSet is not the Deployment's: annotations %v, image %s", clone.Annotations, clone.Spec.Template.Spec.Containers[0].Image)
	}
	if n := readyPods(); n != replicas {
		t.Errorf("%d ready pods after the migration, want %d", n, replicas)
	}

	// Run again: it resumes and has nothing left to move.
	if out, code := kubectlKruise(t, bin, ns, "migrate", "--from", "deployment/legacy", "--to", "cloneset/legacy"); code != 0 || !strings.Contains(out, "resuming") {
		t.Errorf("a second migrate: exit %d\n%s", code, out)
	}
	// A CloneSet it did not make is never taken over, and only Deployments migrate.
	other := newCloneSet(ns, "other", 1, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
	if err := c.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	if out, code := kubectlKruise(t, bin, ns, "migrate", "--from", "deployment/legacy", "--to", "cloneset/other"); code == 0 || !strings.Contains(out, "already exists") {
		t.Errorf("migrate onto a foreign CloneSet: exit %d\n%s", code, out)
	}
	if out, code := kubectlKruise(t, bin, ns, "migrate", "--from", "statefulset/legacy", "--to", "cloneset/x"); code == 0 || !strings.Contains(out, "is not a deployment") {
		t.Errorf("migrate from a StatefulSet: exit %d\n%s", code, out)
	}
}
