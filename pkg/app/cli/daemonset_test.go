package cli

import (
	"context"
	"os"
	"path/filepath"
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
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/test/compat"
)

func TestParseDaemonSet(t *testing.T) {
	for _, args := range [][]string{{"ads/agent"}, {"daemon/agent"}, {"ADS", "agent"}, {"daemonset.apps.kruise.io/agent"},
		{"daemonsets.apps.kruise.io/agent"}, {"advanceddaemonset/agent"}} {
		if k, name, err := ParseWorkload(args); err != nil || name != "agent" || k != DaemonSetKind {
			t.Errorf("%v: %v %q, %v; want the advanced daemonset", args, k, name, err)
		}
	}
	for _, kind := range []string{"ds", "daemonset", "DaemonSets"} {
		if _, _, err := ParseWorkload([]string{kind + "/agent"}); err == nil || !strings.Contains(err.Error(), "native apps/v1 DaemonSet") ||
			!strings.Contains(err.Error(), "ads/NAME") {
			t.Errorf("%s/agent: %v, want it refused as the apps/v1 DaemonSet's name", kind, err)
		}
	}
}

func TestDaemonSetStatus(t *testing.T) {
	ds := func(mutate func(*v1beta1.DaemonSet)) *v1beta1.DaemonSet {
		d := &v1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 2},
			Spec: v1beta1.DaemonSetSpec{UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetRollingUpdateStrategyType,
				RollingUpdate: &v1beta1.DaemonSetRollingUpdate{MaxUnavailable: ptr.To(intstr.FromInt32(1))}}},
			Status: v1beta1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, CurrentNumberScheduled: 4, NumberReady: 4,
				NumberAvailable: 4, UpdatedNumberScheduled: 4}}
		mutate(d)
		return d
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1beta1.DaemonSet)
		done   bool
		says   string
	}{
		{"rolled out", func(*v1beta1.DaemonSet) {}, true, `advanced daemonset "agent" successfully rolled out`},
		{"unobserved", func(d *v1beta1.DaemonSet) { d.Generation = 3 }, false, "spec update to be observed"},
		{"mid-rollout", func(d *v1beta1.DaemonSet) { d.Status.UpdatedNumberScheduled, d.Status.NumberAvailable = 1, 3 }, false,
			"1 of 4 pods updated, 3 available..."},
		{"paused", func(d *v1beta1.DaemonSet) {
			d.Status.UpdatedNumberScheduled, d.Spec.UpdateStrategy.RollingUpdate.Paused = 2, ptr.To(true)
		}, false, "2 of 4 pods updated, 4 available (paused)"},
		{"updated, one not available", func(d *v1beta1.DaemonSet) { d.Status.NumberAvailable = 3 }, false, "3 of 4 pods available"},
		{"partition holds two", func(d *v1beta1.DaemonSet) {
			d.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(intstr.FromInt32(2))
			d.Status.UpdatedNumberScheduled = 2
		}, true, "partitioned rollout done: 2 of 4 pods updated (partition 2"},
		{"partition 50% waits", func(d *v1beta1.DaemonSet) {
			d.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(intstr.FromString("50%"))
			d.Status.UpdatedNumberScheduled = 1
		}, false, "1 of 2 pods updated"},
		{"no node yet", func(d *v1beta1.DaemonSet) { d.Status = v1beta1.DaemonSetStatus{ObservedGeneration: 2} }, true, "successfully rolled out"},
		{"no rollingUpdate", func(d *v1beta1.DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate = nil }, true, "successfully rolled out"},
	} {
		msg, done, err := DaemonSetStatus(ds(tc.mutate))
		if err != nil || done != tc.done || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: %q done=%v err=%v; want done=%v and %q", tc.name, msg, done, err, tc.done, tc.says)
		}
	}
	onDelete := ds(func(d *v1beta1.DaemonSet) {
		d.Spec.UpdateStrategy = v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetOnDeleteStrategyType}
	})
	if _, done, err := DaemonSetStatus(onDelete); !done || err == nil || !strings.Contains(err.Error(), "no rollout to watch") {
		t.Errorf("OnDelete: done=%v err=%v, want an error saying it cannot be watched", done, err)
	}
	selected := ds(func(d *v1beta1.DaemonSet) {
		d.Spec.UpdateStrategy.RollingUpdate.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
		d.Status.UpdatedNumberScheduled = 1
	})
	if msg, done, err := DaemonSetStatus(selected); !done || err == nil || !strings.Contains(err.Error(), "rollingUpdate.selector") ||
		!strings.Contains(msg, "1 of 4 pods updated") {
		t.Errorf("node selector: %q done=%v err=%v, want the counts and an error saying the end cannot be told", msg, done, err)
	}
}

// daemonSetFixture is an Advanced DaemonSet "agent" in namespace ns with revisions 1 (app:v1) and
// 2 (app:v2, the template's and the update revision).
func daemonSetFixture(t *testing.T) (*v1beta1.DaemonSet, []client.Object) {
	t.Helper()
	tpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	}
	ds := &v1beta1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent", UID: types.UID("ds-uid")},
		Spec: v1beta1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: tpl("app:v2"),
			UpdateStrategy: v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetRollingUpdateStrategyType,
				RollingUpdate: &v1beta1.DaemonSetRollingUpdate{Type: v1beta1.DaemonSetInplaceRollingUpdateType,
					MaxUnavailable: ptr.To(intstr.FromInt32(1))}}}}
	objs := []client.Object{ds}
	for i, image := range []string{"app:v1", "app:v2"} {
		recorded := tpl(image)
		rev, err := revision.New(ds, v1beta1.GroupVersion.WithKind("DaemonSet"), revision.Input{Template: &recorded}, int64(i+1), nil)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, rev)
		ds.Status.UpdateRevision = revision.ShortHash(rev.Name) // the hash, as the controller writes it
	}
	return ds, objs
}

// The rollout and set commands drive an Advanced DaemonSet as they drive the other workloads: set
// image, pause and resume (rollingUpdate.paused), history, undo, restart and status.
func TestDaemonSetCommands(t *testing.T) {
	ds, objs := daemonSetFixture(t)
	env, c, _ := fakeEnv(t, objs...)
	get := func() *v1beta1.DaemonSet {
		t.Helper()
		cur := &v1beta1.DaemonSet{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(ds), cur); err != nil {
			t.Fatal(err)
		}
		return cur
	}
	mustRun := func(want string, args ...string) string {
		t.Helper()
		out, err := kubectlKruise(env, args...)
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("%v: %v\n%s\nwant %q", args, err, out, want)
		}
		return out
	}

	mustRun("daemonset.apps.kruise.io/agent image updated", "set", "image", "ads/agent", "app=app:v3")
	if img := get().Spec.Template.Spec.Containers[0].Image; img != "app:v3" {
		t.Errorf("set image: the template runs %s", img)
	}

	mustRun("daemonset.apps.kruise.io/agent paused", "rollout", "pause", "daemon/agent")
	if ru := get().Spec.UpdateStrategy.RollingUpdate; !ptr.Deref(ru.Paused, false) || ru.MaxUnavailable == nil {
		t.Errorf("pause: rollingUpdate %+v, want paused and the rest kept", ru)
	}
	mustRun("daemonset.apps.kruise.io/agent resumed", "rollout", "resume", "ads/agent")
	if ru := get().Spec.UpdateStrategy.RollingUpdate; ptr.Deref(ru.Paused, true) {
		t.Errorf("resume: paused = %v", ru.Paused)
	}

	out := mustRun("app=app:v1", "rollout", "history", "ads/agent")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "1  ") ||
		!strings.Contains(lines[2], "update") || !strings.Contains(lines[2], "app=app:v2") {
		t.Errorf("history: want a header and revisions 1 and 2, the second the update revision:\n%s", out)
	}
	mustRun("rolled back to revision 1", "rollout", "undo", "ads/agent")
	if img := get().Spec.Template.Spec.Containers[0].Image; img != "app:v1" {
		t.Errorf("undo: the template runs %s, want app:v1", img)
	}
	mustRun("rolled back to revision 2", "rollout", "undo", "ads/agent", "--to-revision=2")
	if img := get().Spec.Template.Spec.Containers[0].Image; img != "app:v2" {
		t.Errorf("undo --to-revision=2: the template runs %s, want app:v2", img)
	}

	out = mustRun("daemonset.apps.kruise.io/agent restarted", "rollout", "restart", "ads/agent")
	if !strings.Contains(out, "recreated node by node") {
		t.Errorf("restart says:\n%s", out)
	}
	if at, err := time.Parse(time.RFC3339, get().Spec.Template.Annotations[inplace.RestartedAtAnnotation]); err != nil || time.Since(at) > time.Minute {
		t.Errorf("restartedAt: %v", err)
	}

	mustRun(`advanced daemonset "agent" successfully rolled out`, "rollout", "status", "ads/agent", "--watch=false")
	if out, err := kubectlKruise(env, "rollout", "plan", "ads/agent"); err != nil || !strings.Contains(out, `advanced daemonset "agent": update revision agent-`) {
		t.Errorf("plan: %v\n%s", err, out)
	}
	if _, err := kubectlKruise(env, "rollout", "status", "daemonset/agent"); err == nil || !strings.Contains(err.Error(), "native apps/v1 DaemonSet") {
		t.Errorf("status daemonset/agent: %v, want it refused as the native DaemonSet", err)
	}

	cur := get()
	cur.Spec.UpdateStrategy = v1beta1.DaemonSetUpdateStrategy{Type: v1beta1.DaemonSetOnDeleteStrategyType}
	if err := c.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectlKruise(env, "rollout", "pause", "ads/agent"); err == nil || !strings.Contains(err.Error(), "OnDelete") {
		t.Errorf("pause of an OnDelete daemon set: %v", err)
	}
	if out := mustRun("restarted", "rollout", "restart", "ads/agent"); !strings.Contains(out, "restarts when it is deleted") {
		t.Errorf("restart of an OnDelete daemon set says:\n%s", out)
	}
}

// The status command polls until the controller reports the rollout done, printing each change.
func TestDaemonSetStatusWatch(t *testing.T) {
	ds, objs := daemonSetFixture(t)
	ds.Status = v1beta1.DaemonSetStatus{DesiredNumberScheduled: 2, NumberAvailable: 2, UpdatedNumberScheduled: 1}
	env, _, out := fakeEnv(t)
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	env.client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			err := c.Get(ctx, key, obj, opts...)
			if d, ok := obj.(*v1beta1.DaemonSet); ok && err == nil {
				if reads++; reads > 1 { // the controller updated the second node since the first read
					d.Status.UpdatedNumberScheduled = 2
				}
			}
			return err
		}}).Build()
	if _, err := kubectlKruise(env, "rollout", "status", "ads/agent", "--timeout=10s"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "1 of 2 pods updated") || !strings.Contains(out.String(), "successfully rolled out") {
		t.Errorf("status printed:\n%s", out)
	}
}

// kubectl-kruise reads the revisions OpenKruise v1.9.0 wrote for its DaemonSet (takeover fixture):
// history lists both with their images, undo goes back to the first template.
func TestDaemonSetOpenKruiseHistory(t *testing.T) {
	dir := filepath.Join(compat.OracleDir(filepath.Join("..", "..", "..")), "takeover", "workloads")
	var sets struct{ Items []v1beta1.DaemonSet }
	var revs struct{ Items []appsv1.ControllerRevision }
	for file, into := range map[string]any{"daemonsets.apps.kruise.io.yaml": &sets, "controllerrevisions.yaml": &revs} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("the OpenKruise oracle (set KRUISE_COMPAT_DIR): %v", err)
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			t.Fatal(err)
		}
	}
	var objs []client.Object
	for i := range sets.Items {
		sets.Items[i].ResourceVersion = ""
		objs = append(objs, &sets.Items[i])
	}
	for i := range revs.Items {
		revs.Items[i].ResourceVersion = ""
		objs = append(objs, &revs.Items[i])
	}
	env, c, _ := fakeEnv(t, objs...)
	env.namespace = "takeover"
	out, err := kubectlKruise(env, "rollout", "history", "ads/ads-inplace")
	if err != nil || !strings.Contains(out, "agent=example.com/agent:v1") ||
		!strings.Contains(out, "ads-inplace-5c5484f68f  update  agent=example.com/agent:v2") {
		t.Fatalf("history: %v\n%s", err, out)
	}
	if out, err := kubectlKruise(env, "rollout", "undo", "ads/ads-inplace"); err != nil || !strings.Contains(out, "rolled back to revision 1") {
		t.Fatalf("undo: %v\n%s", err, out)
	}
	ds := &v1beta1.DaemonSet{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "takeover", Name: "ads-inplace"}, ds); err != nil {
		t.Fatal(err)
	}
	if img := ds.Spec.Template.Spec.Containers[0].Image; img != "example.com/agent:v1" {
		t.Errorf("undo: the template runs %s", img)
	}
}
