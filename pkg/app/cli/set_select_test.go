package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// cloneSet is a CloneSet of one container app running image, in namespace ns.
func cloneSet(ns, name, image string, labels map[string]string) *appsv1alpha1.CloneSet {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	return &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](1), Selector: sel, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}}}
}

// imagesOf reads the image of each named workload's first container from c.
func imagesOf(t *testing.T, c client.Client, objs ...client.Object) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		got := o.DeepCopyObject().(client.Object)
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Fatal(err)
		}
		switch g := got.(type) {
		case *appsv1alpha1.CloneSet:
			out = append(out, g.Spec.Template.Spec.Containers[0].Image)
		case *v1beta1.StatefulSet:
			out = append(out, g.Spec.Template.Spec.Containers[0].Image)
		}
	}
	return out
}

// writeFile writes text to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	webManifest = "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: web\n"
	apiManifest = "apiVersion: apps.kruise.io/v1alpha1\nkind: CloneSet\nmetadata:\n  name: api\n  namespace: ns\n"
	svcManifest = "apiVersion: v1\nkind: Service\nmetadata:\n  name: front\n"
	depManifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: old\n"
)

// --all and -l take the workloads of a TYPE (or several) in the namespace: every one, or those whose
// labels match; other namespaces and kinds are left alone.
func TestSetSelectByType(t *testing.T) {
	web, api := cloneSet("ns", "web", "app:v1", map[string]string{"tier": "front"}), cloneSet("ns", "api", "app:v1", map[string]string{"tier": "back"})
	other := cloneSet("elsewhere", "web", "app:v1", nil)
	f := fixtures(t)[0] // asts/db
	for _, tc := range []struct {
		args    []string
		changed []client.Object
	}{
		{[]string{"clone", "--all"}, []client.Object{web, api}},
		{[]string{"clone", "-l", "tier=front"}, []client.Object{web}},
		{[]string{"clone", "--selector", "tier!=front"}, []client.Object{api}},
		{[]string{"clone,asts", "--all"}, []client.Object{web, api, f.obj}},
		{[]string{"asts", "-l", "nothing-has=this"}, nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			env, c, _ := fakeEnv(t, append(f.objs, web, api, other)...)
			out, err := kubectlKruise(env, append(append([]string{"set", "image"}, tc.args...), "app=app:v9")...)
			if tc.changed == nil {
				if err == nil || !strings.Contains(err.Error(), "matches -l nothing-has=this") {
					t.Errorf("nothing selected: %v\n%s", err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, o := range []client.Object{web, api, f.obj, other} {
				want := "app:v1"
				if o == f.obj {
					want = "app:v2"
				}
				for _, ch := range tc.changed {
					if ch == o {
						want = "app:v9"
						if ref := strings.ToLower(map[bool]string{true: "statefulset", false: "cloneset"}[o == f.obj]) +
							".apps.kruise.io/" + o.GetName() + " image updated"; !strings.Contains(out, ref) {
							t.Errorf("output lacks %q:\n%s", ref, out)
						}
					}
				}
				if got := imagesOf(t, c, o)[0]; got != want {
					t.Errorf("%s/%s runs %s, want %s", o.GetNamespace(), o.GetName(), got, want)
				}
			}
		})
	}
	env, _, _ := fakeEnv(t, web)
	wantError(t, env, "give one of them", "set", "image", "clone", "--all", "-l", "a=b", "app=x")
	wantError(t, env, "name the TYPE alone", "set", "image", "clone/web", "--all", "app=x")
	wantError(t, env, "name the TYPE alone", "set", "env", "clone", "web", "-l", "a=b", "A=1")
	wantError(t, env, `-l "a in b"`, "set", "resources", "clone", "-l", "a in b", "--limits=cpu=1")
	wantError(t, env, "native apps/v1 StatefulSet", "set", "sa", "sts", "--all", "robot")
}

// -f, -k and -R take the workloads manifest files name, read from the server; objects of other
// kinds are refused, each named, and the workloads among them still changed.
func TestSetFromFiles(t *testing.T) {
	web, api := cloneSet("ns", "web", "app:v1", nil), cloneSet("ns", "api", "app:v1", nil)
	dir := t.TempDir()
	webFile := writeFile(t, dir, "web.yaml", webManifest)
	mixed := writeFile(t, dir, "mixed.yaml", apiManifest+"---\n"+svcManifest+"---\n"+depManifest)
	writeFile(t, dir, "sub/api.yaml", apiManifest)
	tree := t.TempDir()
	writeFile(t, tree, "web.yaml", webManifest)
	writeFile(t, tree, "sub/api.yaml", apiManifest)
	kust := t.TempDir()
	writeFile(t, kust, "kustomization.yaml", "namespace: ns\nresources:\n- web.yaml\n")
	writeFile(t, kust, "web.yaml", webManifest)
	for _, tc := range []struct {
		args    []string
		changed []client.Object
		refused []string
	}{
		{[]string{"-f", webFile}, []client.Object{web}, nil},
		{[]string{"--filename=" + webFile}, []client.Object{web}, nil},
		{[]string{"-f", mixed}, []client.Object{api}, []string{`Service "front"`, `Deployment "old"`}},
		{[]string{"-f", filepath.Join(dir, "sub")}, []client.Object{api}, nil},
		{[]string{"-k", kust}, []client.Object{web}, nil},
		{[]string{"-f", tree}, []client.Object{web}, nil},
		{[]string{"-f", tree, "-R"}, []client.Object{web, api}, nil},
		{[]string{"-f", dir, "--recursive"}, []client.Object{web, api}, []string{`Service "front"`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			env, c, _ := fakeEnv(t, web, api)
			out, err := kubectlKruise(env, append(append([]string{"set", "image"}, tc.args...), "app=app:v9")...)
			switch {
			case tc.refused == nil && err != nil:
				t.Fatalf("%v\n%s", err, out)
			case tc.refused != nil && err == nil:
				t.Errorf("no error for %v", tc.refused)
			}
			for _, r := range tc.refused {
				if !strings.Contains(err.Error(), r) {
					t.Errorf("error %v does not name %s", err, r)
				}
			}
			for _, o := range []client.Object{web, api} {
				want := "app:v1"
				for _, ch := range tc.changed {
					if ch == o {
						want = "app:v9"
					}
				}
				if got := imagesOf(t, c, o)[0]; got != want {
					t.Errorf("%s runs %s, want %s\n%s", o.GetName(), got, want, out)
				}
			}
		})
	}
	env, c, _ := fakeEnv(t, web, api)
	if out, err := kubectlKruise(env, "set", "resources", "-f", webFile, "--limits=cpu=1"); err != nil || !strings.Contains(out, "cloneset.apps.kruise.io/web resource") {
		t.Errorf("set resources -f: %v\n%s", err, out)
	}
	if out, err := kubectlKruise(env, "set", "sa", "-f", webFile, "robot"); err != nil || !strings.Contains(out, "serviceaccount updated") {
		t.Errorf("set sa -f: %v\n%s", err, out)
	}
	if out, err := kubectlKruise(env, "set", "env", "-f", webFile, "--list", "X=1"); err != nil || !strings.Contains(out, "# CloneSet web, container app\nX=1") {
		t.Errorf("set env -f --list: %v\n%s", err, out)
	}
	got := &appsv1alpha1.CloneSet{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(web), got); err != nil || got.Spec.Template.Spec.ServiceAccountName != "robot" ||
		got.Spec.Template.Spec.Containers[0].Resources.Limits.Cpu().String() != "1" {
		t.Errorf("after set resources and sa -f: %v %+v", err, got.Spec.Template.Spec)
	}
	wantError(t, env, "kubectl kruise set image sidecarset/mesh C=IMAGE", "set", "image", "-f",
		writeFile(t, dir, "mesh.yaml", "apiVersion: apps.kruise.io/v1beta1\nkind: SidecarSet\nmetadata:\n  name: mesh\n"), "app=x")
	wantError(t, env, "give no TYPE/NAME", "set", "image", "clone/web", "-f", webFile, "app=x")
	wantError(t, env, "give -f (with -R) or -k", "set", "image", "-f", webFile, "-k", kust, "app=x")
	wantError(t, env, "not found", "set", "image", "-f", writeFile(t, dir, "gone.yaml", strings.ReplaceAll(webManifest, "web", "gone")), "app=x")
}

// offline is an env whose API server fails every call: --local must not make one.
func offline(t *testing.T) *Env {
	env, _, _ := fakeEnv(t)
	scheme, _ := newScheme()
	fail := errors.New("the API server was called")
	env.client = fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return fail
		},
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return fail },
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return fail
		},
	}).Build()
	return env
}

// --local changes the objects as the files have them and prints them, calling no API server.
func TestSetLocal(t *testing.T) {
	env := offline(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "web.yaml", webManifest+"spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:v1\n"+
		"---\n"+svcManifest)
	out, err := kubectlKruise(env, "set", "image", "-f", file, "--local", "app=app:v9", "-o", "yaml")
	cs := &appsv1alpha1.CloneSet{}
	if err == nil || !strings.Contains(err.Error(), `Service "front"`) {
		t.Errorf("the Service is not refused: %v", err)
	}
	if yaml.Unmarshal([]byte(out), cs) != nil || cs.Kind != "CloneSet" || cs.Namespace != "ns" || cs.Spec.Template.Spec.Containers[0].Image != "app:v9" {
		t.Errorf("--local -o yaml:\n%s", out)
	}
	if out, err := kubectlKruise(env, "set", "env", "-f", file, "--local", "A=1"); !strings.Contains(out, "cloneset.apps.kruise.io/web env updated (local)") {
		t.Errorf("--local without -o: %v\n%s", err, out)
	}
	if out, err := kubectlKruise(env, "set", "resources", "-f", file, "--local", "--limits=cpu=1", "-o", "jsonpath={.spec.template.spec.containers[0].resources.limits.cpu}"); out != "1" {
		t.Errorf("--local -o jsonpath: %v\n%q", err, out)
	}
	wantError(t, env, "the API server was called", "set", "image", "-f", file, "app=app:v9")
	wantError(t, env, "name the files", "set", "image", "clone/web", "--local", "app=x")
	wantError(t, env, "--dry-run=server cannot be with it", "set", "image", "-f", file, "--local", "--dry-run=server", "app=x")
	wantError(t, env, "which --local does not contact", "set", "env", "-f", file, "--local", "--from=secret/x")
	asts := writeFile(t, dir, "asts.yaml", "apiVersion: apps.kruise.io/v1alpha1\nkind: StatefulSet\nmetadata:\n  name: db\n")
	wantError(t, env, "--local reads apps.kruise.io/v1beta1 StatefulSets only", "set", "image", "-f", asts, "--local", "app=x")
}

// Several workloads are TYPE/NAME TYPE/NAME ... or TYPE NAME NAME ..., as in kubectl.
func TestSetSeveralNames(t *testing.T) {
	web, api, other := cloneSet("ns", "web", "app:v1", nil), cloneSet("ns", "api", "app:v1", nil), cloneSet("ns", "other", "app:v1", nil)
	f := fixtures(t)[0] // asts/db, app:v2
	env, c, _ := fakeEnv(t, append(f.objs, web, api, other)...)
	out, err := kubectlKruise(env, "set", "image", "clone/web", "asts/db", "app=app:v9")
	if got := imagesOf(t, c, web, f.obj, api); err != nil || strings.Join(got, ",") != "app:v9,app:v9,app:v1" {
		t.Errorf("set image clone/web asts/db: %v, images %v\n%s", err, got, out)
	}
	out, err = kubectlKruise(env, "set", "sa", "clone", "api", "other", "robot")
	for _, o := range []*appsv1alpha1.CloneSet{web, api, other} {
		if sa := cloneSetSpec(t, c, o).Template.Spec.ServiceAccountName; (sa == "robot") != (o != web) {
			t.Errorf("set sa clone api other robot: %v; %s has %q\n%s", err, o.Name, sa, out)
		}
	}
	wantError(t, env, `clonesets.apps.kruise.io "gone" not found`, "set", "env", "clone", "web", "gone", "A=1")
	if env := envOf(&cloneSetSpec(t, c, web).Template); len(env) != 0 {
		t.Errorf("a missing workload among the names: web was changed anyway: %v", env)
	}
}

// cloneSetSpec reads CloneSet cs's spec back from c.
func cloneSetSpec(t *testing.T, c client.Client, cs *appsv1alpha1.CloneSet) *appsv1alpha1.CloneSetSpec {
	t.Helper()
	got := &appsv1alpha1.CloneSet{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cs), got); err != nil {
		t.Fatal(err)
	}
	return &got.Spec
}
