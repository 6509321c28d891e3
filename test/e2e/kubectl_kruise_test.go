package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
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
	clone.Spec.ProgressDeadlineSeconds = ptr.To[int32](4)
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
	if out, code := kubectlKruise(t, bin, ns, "rollout", "status", "deployment/web"); code == 0 || !strings.Contains(out, "not supported yet") {
		t.Errorf("a Deployment: exit %d\n%s", code, out)
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
	if out := run(0, "rollout", "status", "clone/cli", "--watch=false"); !strings.Contains(out, "(paused)") {
		t.Errorf("a paused rollout's snapshot should say so:\n%s", out)
	}
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
	run(0, "set", "image", "clone/cli", "app=registry.example/app:broken")
	if out := run(2, "rollout", "status", "clone/cli"); !strings.Contains(out, "stuck") {
		t.Errorf("stuck rollout:\n%s", out)
	}
}
