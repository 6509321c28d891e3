package cli

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// migrateEnv is an Env on a fake API server with Deployment "web" of 5 replicas, whose
// controllers act at once when ready is true: every CloneSet pod asked for is available, every
// Deployment pod removed is gone.
func migrateEnv(t *testing.T, ready bool) (*Env, client.Client) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](5), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}}}
	env, _, _ := fakeEnv(t)
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	env.client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(d).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil || !ready {
				return err
			}
			switch o := obj.(type) {
			case *appsv1alpha1.CloneSet:
				o.Status.Replicas, o.Status.AvailableReplicas = *o.Spec.Replicas, *o.Spec.Replicas
			case *appsv1.Deployment:
				o.Status.Replicas = *o.Spec.Replicas
			}
			return nil
		}}).Build()
	return env, env.client
}

func replicasOf(t *testing.T, c client.Client, obj client.Object) int32 {
	t.Helper()
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: obj.GetName()}, obj); err != nil {
		t.Fatal(err)
	}
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		return *o.Spec.Replicas
	case *appsv1.Deployment:
		return *o.Spec.Replicas
	}
	panic(obj)
}

// Kruise's form moves the pods --step at a time.
func TestMigrateKruiseForm(t *testing.T) {
	env, c := migrateEnv(t, true)
	out, err := kubectlKruise(env, "migrate", "--from", "deployment/web", "--to", "cloneset/web-cs", "--step", "2")
	if err != nil || !strings.Contains(out, "in 3 step(s) of up to 2") || !strings.Contains(out, "migrated: cloneset/web-cs runs 5 pod(s)") {
		t.Fatalf("%v\n%s", err, out)
	}
	if cs, d := replicasOf(t, c, &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web-cs"}}),
		replicasOf(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}); cs != 5 || d != 0 {
		t.Errorf("cloneset %d, deployment %d replicas; want 5 and 0", cs, d)
	}
}

// OpenKruise's form: --create makes the CloneSet alone; run again without it, the pods move
// --max-surge at a time (one at a time by default, as OpenKruise's kubectl-kruise does).
func TestMigrateOpenKruiseForm(t *testing.T) {
	env, c := migrateEnv(t, true)
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web-cs"}}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	base := []string{"migrate", "CloneSet", "--from", "Deployment", "--src-name", "web", "--dst-name", "web-cs"}
	out, err := kubectlKruise(env, append(base, "--create")...)
	if err != nil || !strings.Contains(out, "created (0 replicas") || !strings.Contains(out, "to move the pods (5 of them)") {
		t.Fatalf("--create: %v\n%s", err, out)
	}
	if n, d := replicasOf(t, c, cs), replicasOf(t, c, deploy); n != 0 || d != 5 {
		t.Errorf("--create: cloneset %d, deployment %d replicas; want 0 and 5", n, d)
	}
	out, err = kubectlKruise(env, append(base, "--replicas", "5", "--max-surge=2", "--timeout-seconds", "60")...)
	if err != nil || !strings.Contains(out, "resuming") || !strings.Contains(out, "in 3 step(s) of up to 2") {
		t.Fatalf("move: %v\n%s", err, out)
	}
	if n, d := replicasOf(t, c, cs), replicasOf(t, c, deploy); n != 5 || d != 0 {
		t.Errorf("move: cloneset %d, deployment %d replicas; want 5 and 0", n, d)
	}

	env, _ = migrateEnv(t, true)
	if out, err := kubectlKruise(env, base...); err != nil || !strings.Contains(out, "in 5 step(s) of up to 1") {
		t.Errorf("OpenKruise's default max-surge: %v\n%s", err, out)
	}
}

// The flags Kruise does not follow are refused naming what to do instead, before anything is made.
func TestMigrateRefusals(t *testing.T) {
	base := "migrate CloneSet --from Deployment --src-name web --dst-name web-cs "
	for args, says := range map[string]string{
		base + "--create --copy":        "--step 100%",
		base + "--copy":                 "--copy goes with --create",
		base + "--replicas 6":           "has 5 pods to move: give at most 5",
		base + "--replicas 0":           "must be positive",
		base + "--max-surge 0":          "at least 1",
		base + "--max-surge 2 --step 3": "disagree",
		"migrate AdvancedDaemonSet --from DaemonSet --src-name ds --dst-name ads": "Deployments to CloneSets only",
		"migrate CloneSet --from DaemonSet --src-name ds --dst-name web":          "migrates Deployments only",
		"migrate CloneSet --from Deployment --dst-name web-cs":                    "needs --src-name",
		"migrate --from deployment/web --to cloneset/a --dst-name b":              "different CloneSets",
		"migrate --from deployment/web --src-name other --to cloneset/a":          "different Deployments",
		"migrate --from deployment/web":                                           "name the CloneSet",
		"migrate Job --from deployment/web --to cloneset/a":                       "the kind to migrate to is CloneSet",
	} {
		env, c := migrateEnv(t, true)
		if _, err := kubectlKruise(env, strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want an error saying %q", args, err, says)
		}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web-cs"}, &appsv1alpha1.CloneSet{}); err == nil {
			t.Errorf("%s: a CloneSet was made", args)
		}
	}
}

// --timeout-seconds bounds the whole migration: a CloneSet whose pods never become available
// stops it, saying which deadline ran out.
func TestMigrateTimeoutSeconds(t *testing.T) {
	env, _ := migrateEnv(t, false)
	_, err := kubectlKruise(env, "migrate", "--from", "deployment/web", "--to", "cloneset/web-cs", "--timeout-seconds", "1")
	if err == nil || !strings.Contains(err.Error(), "--timeout-seconds (1s) ran out") || !strings.Contains(err.Error(), "run it again to resume") {
		t.Errorf("err %v, want the migration's deadline named", err)
	}
}

// --replicas N moves N pods and stops, the Deployment keeping the rest; run again with a larger N
// it goes on from there, and without --replicas it moves the rest.
func TestMigratePartial(t *testing.T) {
	env, c := migrateEnv(t, true)
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web-cs"}}
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	base := []string{"migrate", "--from", "deployment/web", "--to", "cloneset/web-cs", "--step", "1"}
	for _, tc := range []struct {
		replicas     string
		says         string
		cloneSet, dp int32
	}{
		{"2", "moved: cloneset/web-cs runs 2 of the 5 pod(s), deployment/web 3", 2, 3},
		{"4", "in 2 step(s) of up to 1", 4, 1},
		{"3", "migrating 0 pod(s)", 4, 1},
		{"-1", "migrated: cloneset/web-cs runs 5 pod(s)", 5, 0},
	} {
		out, err := kubectlKruise(env, append(base, "--replicas", tc.replicas)...)
		if err != nil || !strings.Contains(out, tc.says) {
			t.Fatalf("--replicas %s: %v\n%s\nwant %q", tc.replicas, err, out, tc.says)
		}
		if n, d := replicasOf(t, c, cs), replicasOf(t, c, deploy); n != tc.cloneSet || d != tc.dp {
			t.Errorf("--replicas %s: cloneset %d, deployment %d replicas; want %d and %d", tc.replicas, n, d, tc.cloneSet, tc.dp)
		}
	}
}
