package cli

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// setFixture is a fixture's environment with a runner that wants a command to succeed and say
// something, and a reader of the workload's template.
type setFixture struct {
	env *Env
	c   client.Client
	run func(want string, args ...string) string
	tpl func() *corev1.PodTemplateSpec
}

func newSetFixture(t *testing.T, f fixture, objs ...client.Object) setFixture {
	env, c, _ := fakeEnv(t, append(f.objs, objs...)...)
	return setFixture{env: env, c: c,
		run: func(want string, args ...string) string {
			t.Helper()
			out, err := kubectlKruise(env, args...)
			if err != nil || !strings.Contains(out, want) {
				t.Fatalf("%v: %v\n%s\nwant %q", args, err, out, want)
			}
			return out
		},
		tpl: func() *corev1.PodTemplateSpec {
			t.Helper()
			obj := f.obj.DeepCopyObject().(client.Object)
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(f.obj), obj); err != nil {
				t.Fatal(err)
			}
			return f.tpl(obj)
		}}
}

// wantError runs args and wants an error saying says.
func wantError(t *testing.T, env *Env, says string, args ...string) {
	t.Helper()
	if out, err := kubectlKruise(env, args...); err == nil || !strings.Contains(err.Error(), says) {
		t.Errorf("%v: %v\n%s\nwant an error saying %q", args, err, out, says)
	}
}

func envOf(tpl *corev1.PodTemplateSpec) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range tpl.Spec.Containers[0].Env {
		out[e.Name] = e
	}
	return out
}

// set env sets, replaces and removes variables as kubectl does, imports a secret's keys, lists
// them, and says the pods are recreated (an env change is never made in place); a dry run
// changes nothing.
func TestSetEnv(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"},
		Data: map[string][]byte{"user": []byte("admin"), "pass-word": []byte("s3cret")}}
	for _, f := range fixtures(t) {
		t.Run(f.ref, func(t *testing.T) {
			s := newSetFixture(t, f, secret)
			kind, name, _ := strings.Cut(f.ref, "/")
			out := s.run("env updated", "set", "env", kind, name, "A=1", "B=x=y")
			if !strings.Contains(out, "no pod reaches this template in place") || !strings.Contains(out, "recreates the pods") {
				t.Errorf("set env does not say the pods are recreated:\n%s", out)
			}
			if env := envOf(s.tpl()); env["A"].Value != "1" || env["B"].Value != "x=y" {
				t.Errorf("env %v, want A=1 B=x=y", env)
			}
			s.run("env updated", "set", "env", f.ref, "A-", "-e", "C=3")
			if env := envOf(s.tpl()); len(env) != 2 || env["C"].Value != "3" {
				t.Errorf("env %v, want B and C", env)
			}
			s.run("unchanged", "set", "env", f.ref, "A-")
			s.run("env updated", "set", "env", f.ref, "--from=secret/creds", "--prefix=DB_", "--keys=pass-word")
			if e := envOf(s.tpl())["DB_PASS_WORD"]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Key != "pass-word" {
				t.Errorf("DB_PASS_WORD %+v, want a reference to key pass-word of secret creds", e)
			}
			out = s.run(", container app\n", "set", "env", f.ref, "--list", "D=4")
			for _, want := range []string{"# " + map[string]string{"asts": "StatefulSet", "clone": "CloneSet"}[kind] + " " + name, "B=x=y\nC=3\n# DB_PASS_WORD from secret creds, key pass-word\nD=4\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("--list lacks %q:\n%s", want, out)
				}
			}
			if _, ok := envOf(s.tpl())["D"]; ok {
				t.Error("--list sent its change")
			}
			s.run("DB_PASS_WORD=s3cret", "set", "env", f.ref, "--list", "--resolve")
			s.run("(dry run)", "set", "env", f.ref, "E=5", "--dry-run")
			s.run("(server dry run)", "set", "env", f.ref, "E=5", "--dry-run=server")
			if _, ok := envOf(s.tpl())["E"]; ok {
				t.Error("a dry run kept its change")
			}
			wantError(t, s.env, "--overwrite is false", "set", "env", f.ref, "C=4", "--overwrite=false")
			wantError(t, s.env, `no container matches "side*"`, "set", "env", f.ref, "-c", "side*", "X=1")
			wantError(t, s.env, "both set and removed", "set", "env", f.ref, "X=1", "X-")
			wantError(t, s.env, `"clone/web" is not KEY=VALUE`, "set", "env", "X=1", "clone/web")
			wantError(t, s.env, "letters, digits and underscores", "set", "env", f.ref, "a.b=1")
			wantError(t, s.env, "at least one environment variable", "set", "env", f.ref)
			wantError(t, s.env, "secret/NAME or configmap/NAME only", "set", "env", f.ref, "--from=pod/x")
			wantError(t, s.env, `has no key "nope"`, "set", "env", f.ref, "--from=secret/creds", "--keys=nope")
		})
	}
}

// "-" reads KEY=VALUE lines from stdin, comments and lines without = left out.
func TestSetEnvFromStdin(t *testing.T) {
	f := fixtures(t)[1]
	s := newSetFixture(t, f)
	s.env.Streams.In = strings.NewReader("# exported\nA=1 # one\nnot a variable\nB=two\n")
	s.run("env updated", "set", "env", f.ref, "-")
	if env := envOf(s.tpl()); env["A"].Value != "1 " || env["B"].Value != "two" || len(env) != 2 {
		t.Errorf("env %v, want A and B", env)
	}
}

// set resources sets the limits and requests named, of the containers -c matches, leaving the
// others; a CPU and memory change may be made in place where pods can be resized.
func TestSetResources(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.ref, func(t *testing.T) {
			s := newSetFixture(t, f)
			out := s.run("resource requirements updated", "set", "resources", f.ref, "-c", "a*", "--limits=cpu=200m,memory=512Mi",
				"--requests=cpu=100m,memory=256Mi")
			if !strings.Contains(out, "resources changed") || !strings.Contains(out, "recreates the pods") {
				t.Errorf("a change of QoS class is not made in place, the output says otherwise:\n%s", out)
			}
			out = s.run("resource requirements updated", "set", "resources", f.ref, "--limits=cpu=300m")
			if !strings.Contains(out, "resized in place where") {
				t.Errorf("set resources does not say when the pods are resized in place:\n%s", out)
			}
			r := s.tpl().Spec.Containers[0].Resources
			for _, q := range []struct {
				got  resource.Quantity
				want string
			}{{r.Limits[corev1.ResourceCPU], "300m"}, {r.Limits[corev1.ResourceMemory], "512Mi"}, {r.Requests[corev1.ResourceCPU], "100m"},
				{r.Requests[corev1.ResourceMemory], "256Mi"}} {
				if q.got.String() != q.want {
					t.Errorf("resources %+v: got %s, want %s", r, q.got.String(), q.want)
				}
			}
			wantError(t, s.env, "--limits and/or --requests", "set", "resources", f.ref)
			wantError(t, s.env, `"cpu" is not RESOURCE=QUANTITY`, "set", "resources", f.ref, "--limits=cpu")
			wantError(t, s.env, "--requests: memory=lots", "set", "resources", f.ref, "--requests=memory=lots")
			wantError(t, s.env, `no container matches "db"`, "set", "resources", f.ref, "-c", "db", "--limits=cpu=1")
		})
	}
}

// set serviceaccount (sa) takes TYPE/NAME or TYPE NAME, then the account.
func TestSetServiceAccount(t *testing.T) {
	f := fixtures(t)[0]
	s := newSetFixture(t, f)
	s.run("statefulset.apps.kruise.io/db serviceaccount updated", "set", "serviceaccount", "asts", "db", "robot")
	s.run("unchanged", "set", "sa", "asts/db", "robot")
	if sa := s.tpl().Spec.ServiceAccountName; sa != "robot" {
		t.Errorf("serviceAccountName %q, want robot", sa)
	}
}

// set selector refuses: the workloads' selectors are immutable, a Service's is kubectl's to set.
func TestSetSelectorRefused(t *testing.T) {
	env, _, _ := fakeEnv(t)
	wantError(t, env, `the selector of cloneset "web" is immutable`, "set", "selector", "clone/web", "app=web")
	wantError(t, env, "kubectl set selector service/front app=web", "set", "selector", "svc", "front", "app=web")
	wantError(t, env, "native apps/v1 StatefulSet", "set", "selector", "sts/db", "app=web")
}

// set image takes TYPE NAME too, and "*" alone; an image the template has already changes nothing.
func TestSetImageForms(t *testing.T) {
	f := fixtures(t)[1]
	s := newSetFixture(t, f)
	out := s.run("cloneset.apps.kruise.io/web image updated", "set", "image", "cloneset", "web", "*=app:v9")
	if !strings.Contains(out, "updated in place where the update strategy") {
		t.Errorf("set image does not say the pods update in place:\n%s", out)
	}
	if img := s.tpl().Spec.Containers[0].Image; img != "app:v9" {
		t.Errorf("image %s, want app:v9", img)
	}
	s.run("unchanged", "set", "image", "clone/web", "app=app:v9")
	wantError(t, s.env, "give no other CONTAINER=IMAGE", "set", "image", "clone/web", "*=a", "app=b")
	wantError(t, s.env, `"=b" is not CONTAINER=IMAGE`, "set", "image", "clone/web", "=b")
}

// set image sidecarset/NAME sets its containers' and init containers' images; the output says the
// sidecars are upgraded in place and a plain init container reaches new pods only.
func TestSetImageSidecarSet(t *testing.T) {
	sc := func(name, image string) v1beta1.SidecarSetContainer {
		return v1beta1.SidecarSetContainer{Container: corev1.Container{Name: name, Image: image}}
	}
	native := sc("agent", "agent:v1")
	native.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	set := &v1beta1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "mesh"}, Spec: v1beta1.SidecarSetSpec{
		Containers: []v1beta1.SidecarSetContainer{sc("proxy", "proxy:v1"), sc("log", "log:v1")}, InitContainers: []v1beta1.SidecarSetContainer{
			sc("init", "init:v1"), native}}}
	env, c, _ := fakeEnv(t, set)
	out, err := kubectlKruise(env, "set", "image", "sidecarset/mesh", "proxy=proxy:v2", "init=init:v2", "agent=agent:v2")
	for _, want := range []string{"sidecarset.apps.kruise.io/mesh image updated\n", "sidecars proxy, agent: upgraded in place",
		"init containers init: injected only when a pod is created"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("set image sidecarset: %v, lacks %q:\n%s", err, want, out)
		}
	}
	got := &v1beta1.SidecarSet{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "mesh"}, got); err != nil {
		t.Fatal(err)
	}
	if s := got.Spec; s.Containers[0].Image != "proxy:v2" || s.Containers[1].Image != "log:v1" || s.InitContainers[0].Image != "init:v2" ||
		s.InitContainers[1].Image != "agent:v2" {
		t.Errorf("images %+v", s)
	}
	wantError(t, env, `sidecarset "mesh" has no container "app"`, "set", "image", "sidecarsets.apps.kruise.io", "mesh", "app=x")
	if out, err := kubectlKruise(env, "set", "image", "sidecarset/mesh", "log=log:v1"); err != nil || !strings.Contains(out, "unchanged") {
		t.Errorf("an image the SidecarSet has already: %v\n%s", err, out)
	}
	if out, err := kubectlKruise(env, "set", "image", "sidecarset/mesh", "log=log:v3", "-o", "name"); err != nil || out != "sidecarset.apps.kruise.io/mesh\n" {
		t.Errorf("set image sidecarset -o name: %v\n%q", err, out)
	}
	wantError(t, env, "name the files", "set", "image", "sidecarset/mesh", "log=log:v4", "--local")
}
