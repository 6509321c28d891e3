package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// -o prints the changed objects as kubectl's printers do (and nothing else), after the patch or,
// with --dry-run=client, without it; --record is accepted and changes nothing.
func TestSetOutput(t *testing.T) {
	web := cloneSet("ns", "web", "app:v1", nil)
	env, c, _ := fakeEnv(t, web)
	for args, want := range map[string]string{
		"-o name": "cloneset.apps.kruise.io/web\n",
		"-o=jsonpath={.spec.template.spec.containers[0].image}": "app:v2",
		"-o go-template={{.metadata.name}}":                     "web",
		"--template={{.kind}}":                                  "CloneSet",
		"-o go-template --template={{.apiVersion}}":             "apps.kruise.io/v1alpha1",
	} {
		out, err := kubectlKruise(env, append([]string{"set", "image", "clone/web", "app=app:v2"}, strings.Fields(args)...)...)
		if err != nil || out != want {
			t.Errorf("%s: %v\n%q, want %q", args, err, out, want)
		}
	}
	out, err := kubectlKruise(env, "set", "image", "clone/web", "app=app:v3", "-o", "json", "--dry-run=client")
	cs := &appsv1alpha1.CloneSet{}
	if err != nil || json.Unmarshal([]byte(out), cs) != nil || cs.Spec.Template.Spec.Containers[0].Image != "app:v3" {
		t.Errorf("-o json --dry-run=client: %v\n%s", err, out)
	}
	if got := imagesOf(t, c, web)[0]; got != "app:v2" {
		t.Errorf("--dry-run=client -o json sent the change: %s", got)
	}
	wantError(t, env, `unable to match a printer suitable for the output format "wide"`, "set", "image", "clone/web", "app=x", "-o", "wide")
	if out, err := kubectlKruise(env, "set", "image", "clone/web", "app=app:v4", "--record"); err != nil || !strings.Contains(out, "image updated") {
		t.Errorf("--record: %v\n%s", err, out)
	}
	got := &appsv1alpha1.CloneSet{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(web), got); err != nil || len(got.Annotations) != 0 {
		t.Errorf("--record left annotations %v (%v)", got.Annotations, err)
	}
}

// -o yaml leaves the workload's managedFields out unless --show-managed-fields, as kubectl does.
func TestSetOutputManagedFields(t *testing.T) {
	web := cloneSet("ns", "web", "app:v1", nil)
	web.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "apps.kruise.io/v1alpha1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)}}
	env, _, _ := fakeEnv(t)
	scheme, _ := newScheme()
	env.client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(web).WithReturnManagedFields().Build()
	for _, show := range []bool{false, true} {
		args := []string{"set", "env", "clone/web", "A=1", "--dry-run=client", "-o", "yaml"}
		if show {
			args = append(args, "--show-managed-fields")
		}
		out, err := kubectlKruise(env, args...)
		if err != nil || strings.Contains(out, "managedFields:") != show {
			t.Errorf("--show-managed-fields %t: %v\n%s", show, err, out)
		}
	}
}
