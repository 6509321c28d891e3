package cli

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-ng/kruise/pkg/core/sidecarrules"
)

// exec -S names a hot-upgrade sidecar's working copy (or the sidecar itself), and prints the
// kubectl exec that runs the command there, quoted for a shell, with --print.
func TestExecSidecar(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0",
		Annotations: map[string]string{sidecarrules.WorkingHotUpgradeContainerAnnotation: `{"proxy":"proxy-2"}`}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "proxy-1"}, {Name: "proxy-2"}, {Name: "log"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	env, _, _ := fakeEnv(t, pod)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"web-0", "-S", "proxy", "-it", "--", "sh", "-c", "echo 'hi'"},
			`sidecar proxy is hot-upgraded: its working container is proxy-2` + "\n" +
				`kubectl exec -n ns web-0 -c proxy-2 -i -t -- sh -c 'echo '\''hi'\'''`},
		{[]string{"pod/web-0", "-S", "log", "--", "date"}, "kubectl exec -n ns web-0 -c log -- date"},
		{[]string{"web-0", "-c", "proxy-1", "--", "date"}, "kubectl exec -n ns web-0 -c proxy-1 -- date"},
		{[]string{"web-0", "--", "date"}, `Defaulted container "app" out of: app, proxy-1, proxy-2, log` + "\nkubectl exec -n ns web-0 -c app -- date"},
	} {
		out, err := kubectlKruise(env, append([]string{"exec", "--print"}, tc.args...)...)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("exec %v: %v\n%s\nwant %q", tc.args, err, out, tc.want)
		}
	}
	wantError(t, env, `pod web-0 has no sidecar "mesh" (its containers: app, proxy-1, proxy-2, log)`, "exec", "web-0", "-S", "mesh", "--", "sh")
	wantError(t, env, "give the command after --", "exec", "web-0", "-S", "proxy")
	wantError(t, env, "name one pod", "exec", "web-0", "web-1", "--", "sh")
}

// exec TYPE/NAME goes into the workload's first ready pod.
func TestExecWorkloadPod(t *testing.T) {
	f := fixtures(t)[1] // clone/web
	objs := f.objs
	for i, ready := range []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue, corev1.ConditionTrue} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: []string{"web-a", "web-c", "web-b"}[i],
			Labels: map[string]string{"app": "web"}, CreationTimestamp: metav1.NewTime(time.Unix(1000, 0)),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(f.obj, CloneSetKind.gk.WithVersion("v1alpha1"))}},
			Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
		objs = append(objs, p)
	}
	env, _, _ := fakeEnv(t, objs...)
	if out, err := kubectlKruise(env, "exec", "--print", "clone/web", "--", "date"); err != nil ||
		!strings.Contains(out, "kubectl exec -n ns web-b -c app -- date") {
		t.Errorf("exec clone/web: %v\n%s", err, out)
	}
}
