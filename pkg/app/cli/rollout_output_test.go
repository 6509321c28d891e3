package cli

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

// withManagedFields gives f's revisions managedFields, which -o yaml and json leave out unless
// --show-managed-fields, as kubectl's printers do; it returns the objects and the revisions' names.
func withManagedFields(f fixture) ([]client.Object, []string) {
	objs := []client.Object{f.obj}
	var names []string
	for _, o := range f.objs[1:] {
		r := o.(*appsv1.ControllerRevision).DeepCopy()
		r.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kruise-manager", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "apps/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:revision":{}}`)}}
		objs, names = append(objs, r), append(names, r.Name)
	}
	return objs, names
}

// history -o prints the ControllerRevisions without --revision and the revision's pod template
// with it (-o name: the revision), through kubectl's printers.
func TestHistoryOutput(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.ref, func(t *testing.T) {
			objs, names := withManagedFields(f)
			env, _, _ := fakeEnv(t)
			scheme, _ := newScheme()
			env.client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithReturnManagedFields().Build()
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"-o", "name"}, "controllerrevision.apps/" + names[0] + "\ncontrollerrevision.apps/" + names[1] + "\n"},
				{[]string{"-o", "jsonpath={.revision}"}, "12"},
				{[]string{"--template={{.metadata.name}},"}, names[0] + "," + names[1] + ","},
				{[]string{"-o", "go-template={{.kind}}"}, "ControllerRevisionControllerRevision"},
				{[]string{"--revision=2", "-o", "jsonpath={.spec.containers[0].image}"}, "app:v2"},
				{[]string{"--revision=1", "-o", "go-template={{range .spec.containers}}{{.image}}{{end}}"}, "app:v1"},
				{[]string{"--revision=1", "--template", "{{(index .spec.containers 0).name}}"}, "app"},
				{[]string{"--revision=1", "-o", "name"}, "controllerrevision.apps/" + names[0] + "\n"},
				{[]string{"--revision=2", "-o", "jsonpath-as-json={.spec.containers[0].image}"}, "[\n    \"app:v2\"\n]\n"},
			} {
				out, err := kubectlKruise(env, append([]string{"rollout", "history", f.ref}, tc.args...)...)
				if err != nil || out != tc.want {
					t.Errorf("history %s: %v\n%q, want %q", tc.args, err, out, tc.want)
				}
			}
			if _, err := kubectlKruise(env, "rollout", "history", f.ref, "-o", "jsonpath={.nothing}", "--allow-missing-template-keys=false"); err == nil ||
				!strings.Contains(err.Error(), "nothing is not found") {
				t.Errorf("history -o jsonpath of a missing key, --allow-missing-template-keys=false: %v", err)
			}
			if out, err := kubectlKruise(env, "rollout", "history", f.ref, "--revision=1", "-o", "kyaml"); err != nil ||
				!strings.Contains(out, "app:v1") || strings.Contains(out, "ControllerRevision") {
				t.Errorf("history --revision=1 -o kyaml: %v\n%s", err, out)
			}
			for _, show := range []bool{false, true} {
				args := []string{"rollout", "history", f.ref, "-o", "yaml"}
				if show {
					args = append(args, "--show-managed-fields")
				}
				out, err := kubectlKruise(env, args...)
				docs := strings.Split(out, "---\n")
				if err != nil || len(docs) != 2 {
					t.Fatalf("history -o yaml: %v, %d documents\n%s", err, len(docs), out)
				}
				for i, doc := range docs {
					r := &appsv1.ControllerRevision{}
					if err := yaml.UnmarshalStrict([]byte(doc), r); err != nil || r.Kind != "ControllerRevision" || r.Name != names[i] ||
						(len(r.ManagedFields) > 0) != show {
						t.Errorf("history -o yaml (--show-managed-fields %t), document %d: %v\n%s", show, i, err, doc)
					}
				}
			}
		})
	}
}

// undo -o prints the workload as the undo writes it: sent (none, server) or not (client).
func TestUndoOutput(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.ref, func(t *testing.T) {
			env, c, _ := fakeEnv(t, f.objs...)
			image := func() string { return f.liveImage(t, c) }
			out, err := kubectlKruise(env, "rollout", "undo", f.ref, "--dry-run=client", "-o", "yaml")
			obj := f.obj.DeepCopyObject().(client.Object)
			if err != nil || yaml.Unmarshal([]byte(out), obj) != nil || f.tpl(obj).Spec.Containers[0].Image != "app:v1" ||
				obj.GetObjectKind().GroupVersionKind().Kind == "" {
				t.Errorf("undo --dry-run=client -o yaml: %v\n%s", err, out)
			}
			if img := image(); img != "app:v2" {
				t.Errorf("undo --dry-run=client -o yaml sent the change: %s", img)
			}
			out, err = kubectlKruise(env, "rollout", "undo", f.ref, "--dry-run=server", "-o", "json")
			obj = f.obj.DeepCopyObject().(client.Object)
			if err != nil || json.Unmarshal([]byte(out), obj) != nil || f.tpl(obj).Spec.Containers[0].Image != "app:v1" || image() != "app:v2" {
				t.Errorf("undo --dry-run=server -o json: %v\n%s", err, out)
			}
			resource := map[bool]string{true: StatefulSetKind.Resource, false: CloneSetKind.Resource}[strings.HasPrefix(f.ref, "asts/")]
			if out, err := kubectlKruise(env, "rollout", "undo", f.ref, "-o", "name"); err != nil || out != resource+"/"+f.obj.GetName()+"\n" {
				t.Errorf("undo -o name: %v\n%q", err, out)
			}
			if img := image(); img != "app:v1" {
				t.Errorf("undo -o name did not roll back: %s", img)
			}
			out, err = kubectlKruise(env, "rollout", "undo", f.ref, "--to-revision=1", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
			if err != nil || out != "app:v1" {
				t.Errorf("undo to the template's own revision -o jsonpath: %v\n%q", err, out)
			}
		})
	}
}
