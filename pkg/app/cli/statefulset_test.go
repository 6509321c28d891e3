package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/statefulset"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/ordinal"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
)

func TestStatefulSetStatus(t *testing.T) {
	set := func(mutate func(*v1beta1.StatefulSet)) *v1beta1.StatefulSet {
		s := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 2},
			Spec: v1beta1.StatefulSetSpec{Replicas: ptr.To[int32](3), UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{}}},
			Status: v1beta1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
				UpdatedReplicas: 3, UpdatedReadyReplicas: 3}}
		mutate(s)
		return s
	}
	for _, tc := range []struct {
		name   string
		mutate func(*v1beta1.StatefulSet)
		done   bool
		says   string
	}{
		{"rolled out", func(*v1beta1.StatefulSet) {}, true, `advanced statefulset "db" successfully rolled out`},
		{"unobserved", func(s *v1beta1.StatefulSet) { s.Generation = 3 }, false, "spec update to be observed"},
		{"mid-rollout", func(s *v1beta1.StatefulSet) { s.Status.UpdatedReplicas, s.Status.UpdatedReadyReplicas = 1, 1 }, false,
			"1 of 3 pods updated, 1 ready, 3 available..."},
		{"paused", func(s *v1beta1.StatefulSet) {
			s.Status.UpdatedReplicas, s.Spec.UpdateStrategy.RollingUpdate.Paused = 2, true
		}, false, "2 of 3 pods updated, 3 ready, 3 available (paused)"},
		{"updated, one not ready", func(s *v1beta1.StatefulSet) { s.Status.UpdatedReadyReplicas, s.Status.AvailableReplicas = 2, 2 },
			false, "2 of 3 updated pods ready, 2 of 3 available"},
		{"scale-in pending", func(s *v1beta1.StatefulSet) { s.Status.Replicas = 5 }, false, "2 pods beyond the replicas are pending termination"},
		{"partition holds one", func(s *v1beta1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](1)
			s.Status.UpdatedReplicas, s.Status.UpdatedReadyReplicas = 2, 2
		}, true, "partitioned rollout done: 2 of 3 pods updated (partition 1: the pods below it keep the current revision)"},
		{"partition waits", func(s *v1beta1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](1)
			s.Status.UpdatedReplicas = 1
		}, false, "1 of 2 pods updated"},
		{"partition beyond the replicas", func(s *v1beta1.StatefulSet) {
			s.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](9)
			s.Status.UpdatedReplicas, s.Status.UpdatedReadyReplicas = 0, 0
		}, true, "0 of 3 pods updated (partition 3"},
		{"no rollingUpdate", func(s *v1beta1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate = nil }, true, "successfully rolled out"},
	} {
		msg, done, err := StatefulSetStatus(set(tc.mutate))
		if err != nil || done != tc.done || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: %q done=%v err=%v; want done=%v and %q", tc.name, msg, done, err, tc.done, tc.says)
		}
	}
	onDelete := set(func(s *v1beta1.StatefulSet) {
		s.Spec.UpdateStrategy = v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	})
	if _, done, err := StatefulSetStatus(onDelete); !done || err == nil || !strings.Contains(err.Error(), "no rollout to watch") {
		t.Errorf("OnDelete: done=%v err=%v, want an error saying it cannot be watched", done, err)
	}
}

var t0 = time.Unix(1_700_000_000, 0)

// stsSnap is a snapshot of set "web" with replicas pods at revision web-old (updatable in place to
// web-new) and the spec mutate makes of a defaulted one.
func stsSnap(replicas int, mutate func(*v1beta1.StatefulSetSpec)) *statefulset.Snapshot {
	set := &v1beta1.StatefulSet{Spec: v1beta1.StatefulSetSpec{Replicas: ptr.To(int32(replicas)),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	defaults.SetDefaultsStatefulSetV1beta1(set)
	mutate(&set.Spec)
	s := &statefulset.Snapshot{Spec: set.Spec, Name: "web", CurrentRevision: "web-old", UpdateRevision: "web-new",
		InPlace: map[string]inplace.Decision{"web-old": {Spec: &inplace.UpdateSpec{Revision: "web-new",
			ContainerImages: map[string]string{"app": "app:v2"}}}}}
	for ord := range replicas {
		s.Pods = append(s.Pods, statefulset.PodFacts{Name: ordinal.PodName("web", ord), Ordinal: ord, Revision: "web-old",
			State: podcontrol.State{Phase: corev1.PodRunning, Ready: true, ReadySince: t0.Add(-time.Hour)}})
	}
	return s
}

// render is a forecast's steps, one line each: "in place web-2 | ..." or "then: waits".
func render(steps []forecastStep) []string {
	var out []string
	for _, st := range steps {
		if len(st.actions) == 0 {
			out = append(out, "then: "+strings.Join(st.waits, "; "))
			continue
		}
		var parts []string
		for _, a := range st.actions {
			name, _, _ := strings.Cut(a.what, ":")
			parts = append(parts, a.verb+" "+name)
		}
		out = append(out, strings.Join(parts, " | "))
	}
	return out
}

func TestForecastStatefulSet(t *testing.T) {
	policy := func(p v1beta1.StatefulSetPodUpdatePolicyType) func(*v1beta1.StatefulSetSpec) {
		return func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.RollingUpdate.PodUpdatePolicy = p }
	}
	for _, tc := range []struct {
		name string
		snap *statefulset.Snapshot
		want []string
	}{
		{"in place, by descending ordinal, one at a time", stsSnap(3, policy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)),
			[]string{"in place web-2", "in place web-1", "in place web-0", "then: "}},
		{"partition keeps web-0", stsSnap(3, func(s *v1beta1.StatefulSetSpec) {
			policy(v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy)(s)
			s.UpdateStrategy.RollingUpdate.Partition = ptr.To[int32](1)
		}), []string{"in place web-2", "in place web-1", "then: "}},
		{"recreate: deleted, then created at the update revision", stsSnap(2, policy(v1beta1.RecreateStatefulSetPodUpdatePolicy)),
			[]string{"recreate web-1", "create web-1 at web-new", "recreate web-0", "create web-0 at web-new", "then: "}},
		{"paused", stsSnap(2, func(s *v1beta1.StatefulSetSpec) { s.UpdateStrategy.RollingUpdate.Paused = true }),
			[]string{"then: rollingUpdate.paused: no pod is updated"}},
		{"OrderedReady scale-up, one at a time", func() *statefulset.Snapshot {
			s := stsSnap(3, func(s *v1beta1.StatefulSetSpec) { s.Replicas = ptr.To[int32](3) })
			s.Pods = s.Pods[:1]
			s.UpdateRevision, s.CurrentRevision = "web-old", "web-old"
			return s
		}(), []string{"create web-1 at web-old", "create web-2 at web-old", "then: "}},
		{"nothing to do", func() *statefulset.Snapshot {
			s := stsSnap(2, func(*v1beta1.StatefulSetSpec) {})
			s.UpdateRevision = "web-old"
			return s
		}(), nil},
	} {
		got := render(forecastStatefulSet(tc.snap, t0, 20))
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// A pod ready for less than minReadySeconds holds the rollout only until it is available: the
// forecast moves time on instead of stopping there.
func TestForecastStatefulSetWaitsForMinReady(t *testing.T) {
	s := stsSnap(2, func(s *v1beta1.StatefulSetSpec) {
		s.UpdateStrategy.RollingUpdate.PodUpdatePolicy = v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy
		s.UpdateStrategy.RollingUpdate.MinReadySeconds = ptr.To[int32](30)
	})
	s.Pods[1].Revision, s.Pods[1].ReadySince = "web-new", t0.Add(-10*time.Second) // web-1 just updated
	got := render(forecastStatefulSet(s, t0, 20))
	if want := []string{"in place web-0", "then: "}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// fakeEnv is an Env on a fake API server holding objs, in namespace ns.
func fakeEnv(t *testing.T, objs ...client.Object) (*Env, client.Client, *bytes.Buffer) {
	t.Helper()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	out := &bytes.Buffer{}
	return &Env{Flags: genericclioptions.NewConfigFlags(true), Streams: genericiooptions.IOStreams{Out: out, ErrOut: out},
		client: c, namespace: "ns"}, c, out
}

// kubectlKruise runs the command args against env and returns its output.
func kubectlKruise(env *Env, args ...string) (string, error) {
	out := env.Streams.Out.(*bytes.Buffer)
	out.Reset()
	root := newRoot(env)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// fixture is one workload of each kind, with revisions 1 (app:v1) and 2 (app:v2, the template's).
type fixture struct {
	ref  string
	obj  client.Object
	tpl  func(client.Object) *corev1.PodTemplateSpec
	objs []client.Object
}

// liveImage is the first container's image of f's workload as c holds it now.
func (f fixture) liveImage(t *testing.T, c client.Client) string {
	t.Helper()
	obj := f.obj.DeepCopyObject().(client.Object)
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(f.obj), obj); err != nil {
		t.Fatal(err)
	}
	return f.tpl(obj).Spec.Containers[0].Image
}

func fixtures(t *testing.T) []fixture {
	tpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	set := &v1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: types.UID("set-uid")},
		Spec: v1beta1.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: sel, Template: tpl("app:v2"),
			UpdateStrategy: v1beta1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &v1beta1.StatefulSetRollingUpdateStrategy{PodUpdatePolicy: v1beta1.InPlaceIfPossibleStatefulSetPodUpdatePolicy}}}}
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: types.UID("cs-uid")},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](3), Selector: sel, Template: tpl("app:v2")}}
	var out []fixture
	for _, f := range []struct {
		ref   string
		obj   client.Object
		gvk   string
		tpl   func(client.Object) *corev1.PodTemplateSpec
		setRv func(current, update string)
	}{
		{"asts/db", set, "StatefulSet", func(o client.Object) *corev1.PodTemplateSpec { return &o.(*v1beta1.StatefulSet).Spec.Template },
			func(c, u string) { set.Status.CurrentRevision, set.Status.UpdateRevision = c, u }},
		{"clone/web", cs, "CloneSet", func(o client.Object) *corev1.PodTemplateSpec { return &o.(*appsv1alpha1.CloneSet).Spec.Template },
			func(c, u string) { cs.Status.CurrentRevision, cs.Status.UpdateRevision = c, u }},
	} {
		gvk := v1beta1.GroupVersion.WithKind(f.gvk)
		if f.gvk == "CloneSet" {
			gvk = appsv1alpha1.GroupVersion.WithKind(f.gvk)
		}
		objs := []client.Object{f.obj}
		var names []string
		for i, image := range []string{"app:v1", "app:v2"} {
			recorded := tpl(image)
			rev, err := revision.New(f.obj, gvk, revision.Input{Template: &recorded}, int64(i+1), nil)
			if err != nil {
				t.Fatal(err)
			}
			objs, names = append(objs, rev), append(names, rev.Name)
		}
		f.setRv(names[1], names[1])
		out = append(out, fixture{ref: f.ref, obj: f.obj, tpl: f.tpl, objs: objs})
	}
	return out
}

// The rollout and set commands drive a CloneSet and an Advanced StatefulSet through the same code:
// set image, pause and resume, history, undo.
func TestWorkloadCommands(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.ref, func(t *testing.T) {
			env, c, _ := fakeEnv(t, f.objs...)
			get := func() client.Object {
				t.Helper()
				obj := f.obj.DeepCopyObject().(client.Object)
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(f.obj), obj); err != nil {
					t.Fatal(err)
				}
				return obj
			}
			resource := CloneSetKind.Resource
			if strings.HasPrefix(f.ref, "asts/") {
				resource = StatefulSetKind.Resource
			}
			name := f.obj.GetName()
			mustRun := func(want string, args ...string) string {
				t.Helper()
				out, err := kubectlKruise(env, args...)
				if err != nil || !strings.Contains(out, want) {
					t.Fatalf("%v: %v\n%s\nwant %q", args, err, out, want)
				}
				return out
			}

			mustRun(resource+"/"+name+" image updated", "set", "image", f.ref, "app=app:v3")
			if img := f.tpl(get()).Spec.Containers[0].Image; img != "app:v3" {
				t.Errorf("set image: the template runs %s", img)
			}
			if out, err := kubectlKruise(env, "set", "image", f.ref, "nope=app:v4"); err == nil || !strings.Contains(err.Error(), `no container "nope"`) {
				t.Errorf("set image of a missing container: %v\n%s", err, out)
			}

			mustRun(resource+"/"+name+" paused", "rollout", "pause", f.ref)
			if !paused(get()) {
				t.Error("pause did not set paused")
			}
			mustRun(resource+"/"+name+" resumed", "rollout", "resume", f.ref)
			if paused(get()) {
				t.Error("resume did not clear paused")
			}

			out := mustRun("app=app:v1", "rollout", "history", f.ref)
			if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.Contains(lines[2], "current,update") ||
				!strings.Contains(lines[2], "app=app:v2") {
				t.Errorf("history: want a header and 2 revisions, the second current and update:\n%s", out)
			}
			mustRun("rolled back to revision 1", "rollout", "undo", f.ref)
			if img := f.tpl(get()).Spec.Containers[0].Image; img != "app:v1" {
				t.Errorf("undo: the template runs %s, want app:v1", img)
			}
			mustRun("rolled back to revision 2", "rollout", "undo", f.ref, "--to-revision=2")
			if img := f.tpl(get()).Spec.Containers[0].Image; img != "app:v2" {
				t.Errorf("undo --to-revision=2: the template runs %s, want app:v2", img)
			}
		})
	}
}

func paused(obj client.Object) bool {
	switch o := obj.(type) {
	case *appsv1alpha1.CloneSet:
		return o.Spec.UpdateStrategy.Paused
	case *v1beta1.StatefulSet:
		return o.Spec.UpdateStrategy.RollingUpdate != nil && o.Spec.UpdateStrategy.RollingUpdate.Paused
	}
	panic(fmt.Sprintf("%T", obj))
}

// An Advanced StatefulSet restarts through its rolling update: the template gets
// kubectl.kubernetes.io/restartedAt, and the output says the pods are recreated (the annotation
// cannot be reached in place). OnDelete sets cannot be paused, scaledown and migrate refuse them.
func TestStatefulSetOnlyCommands(t *testing.T) {
	f := fixtures(t)[0]
	env, c, _ := fakeEnv(t, f.objs...)
	out, err := kubectlKruise(env, "rollout", "restart", "statefulset.apps.kruise.io/db")
	if err != nil || !strings.Contains(out, "statefulset.apps.kruise.io/db restarted") || !strings.Contains(out, "recreated one after another") {
		t.Errorf("restart: %v\n%s", err, out)
	}
	set := &v1beta1.StatefulSet{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(f.obj), set); err != nil {
		t.Fatal(err)
	}
	if at, err := time.Parse(time.RFC3339, set.Spec.Template.Annotations[inplace.RestartedAtAnnotation]); err != nil || time.Since(at) > time.Minute {
		t.Errorf("restartedAt %q: %v", set.Spec.Template.Annotations[inplace.RestartedAtAnnotation], err)
	}

	out, err = kubectlKruise(env, "rollout", "status", "asts/db", "--watch=false")
	if err != nil || !strings.Contains(out, `advanced statefulset "db"`) {
		t.Errorf("status: %v\n%s", err, out)
	}
	if _, err := kubectlKruise(env, "scaledown", "asts/db", "--pods", "db-0"); err == nil || !strings.Contains(err.Error(), "CloneSets only") {
		t.Errorf("scaledown of an Advanced StatefulSet: %v", err)
	}
	if _, err := kubectlKruise(env, "migrate", "--from", "deployment/x", "--to", "asts/db"); err == nil || !strings.Contains(err.Error(), "to CloneSets") {
		t.Errorf("migrate to an Advanced StatefulSet: %v", err)
	}

	set.Spec.UpdateStrategy = v1beta1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	if err := c.Update(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectlKruise(env, "rollout", "pause", "asts/db"); err == nil || !strings.Contains(err.Error(), "OnDelete") {
		t.Errorf("pause of an OnDelete set: %v", err)
	}
	if _, err := kubectlKruise(env, "rollout", "status", "asts/db"); err == nil || !strings.Contains(err.Error(), "no rollout to watch") {
		t.Errorf("status of an OnDelete set: %v", err)
	}
}

// rollout plan reads an Advanced StatefulSet as its controller does and prints the planner's steps:
// pods of the old revision updated in place, by descending ordinal, one at a time.
func TestStatefulSetPlanCommand(t *testing.T) {
	f := fixtures(t)[0]
	set := f.obj.(*v1beta1.StatefulSet)
	old := f.objs[1].(*appsv1.ControllerRevision)
	set.Status.CurrentRevision = old.Name
	objs := f.objs
	for ord := range 3 {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: ordinal.PodName("db", ord),
			Labels:          map[string]string{"app": "web", appsv1.ControllerRevisionHashLabelKey: old.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, v1beta1.GroupVersion.WithKind("StatefulSet"))}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady,
				Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}}})
	}
	env, _, _ := fakeEnv(t, objs...)
	out, err := kubectlKruise(env, "rollout", "plan", "asts/db")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{`advanced statefulset "db": update revision`, "step 1:\n  in place db-2", "step 2:\n  in place db-1",
		"step 3:\n  in place db-0", "then: done"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}
