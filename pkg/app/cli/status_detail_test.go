package cli

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// statusFixture is clone/web mid-rollout: revision 2 its update revision, one pod at revision 1,
// one at 2 not ready, one at 2 ready.
func statusFixture(t *testing.T) (*Env, string) {
	f := fixtures(t)[1]
	cs := f.obj.(*appsv1alpha1.CloneSet)
	update := cs.Status.UpdateRevision
	var old string
	for _, o := range f.objs {
		if r, ok := o.(*appsv1.ControllerRevision); ok && r.Revision == 1 {
			old = r.Name
		}
	}
	cs.Status.ObservedGeneration, cs.Status.Replicas, cs.Status.UpdatedReplicas, cs.Status.UpdatedReadyReplicas = cs.Generation, 3, 2, 1
	objs := f.objs
	for _, p := range []struct {
		name, rev string
		ready     corev1.ConditionStatus
	}{{"web-a", old, corev1.ConditionTrue}, {"web-b", update, corev1.ConditionFalse}, {"web-c", update, corev1.ConditionTrue}} {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: p.name,
			Labels:          map[string]string{"app": "web", appsv1.ControllerRevisionHashLabelKey: p.rev},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cs, CloneSetKind.gk.WithVersion("v1alpha1"))}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: p.ready}}}})
	}
	env, _, _ := fakeEnv(t, objs...)
	return env, old
}

// rollout status -d lists, under the progress line, the pods not at the update revision, then
// those at it not ready.
func TestStatusDetail(t *testing.T) {
	env, old := statusFixture(t)
	out, err := kubectlKruise(env, "rollout", "status", "clone/web", "-d", "--watch=false")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "2 of 3 pods updated") ||
		!strings.HasPrefix(lines[1], "  pod web-a: at revision "+old+", not yet ") || lines[2] != "  pod web-b: updated, not ready (Running)" {
		t.Errorf("rollout status -d:\n%s", out)
	}
	if out, _ := kubectlKruise(env, "rollout", "status", "clone/web", "--watch=false"); strings.Contains(out, "pod web-") {
		t.Errorf("without -d, pods listed:\n%s", out)
	}
}

// rollout status --revision=N fails when the update revision is another, as kubectl does.
func TestStatusRevision(t *testing.T) {
	env, _ := statusFixture(t)
	wantError(t, env, "desired revision (1) is different from the running revision (2) of cloneset.apps.kruise.io/web",
		"rollout", "status", "clone/web", "--revision=1")
	if out, err := kubectlKruise(env, "rollout", "status", "clone/web", "--revision=2", "--watch=false"); err != nil ||
		!strings.Contains(out, "2 of 3 pods updated") {
		t.Errorf("--revision=2: %v\n%s", err, out)
	}
}
