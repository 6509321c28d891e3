package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// history --revision=N shows that revision's pod template, described or as yaml or json, for
// every kind.
func TestHistoryRevision(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.ref, func(t *testing.T) {
			env, _, _ := fakeEnv(t, f.objs...)
			out, err := kubectlKruise(env, "rollout", "history", f.ref, "--revision=1")
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			resource := CloneSetKind.Resource
			if strings.HasPrefix(f.ref, "asts/") {
				resource = StatefulSetKind.Resource
			}
			for _, want := range []string{resource + "/" + f.obj.GetName() + " with revision #1", "Pod Template:", "Labels:",
				"app=web", "Containers:\n   app:\n", "Image:", "app:v1"} {
				if !strings.Contains(out, want) {
					t.Errorf("history --revision=1 lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "app:v2") {
				t.Errorf("history --revision=1 shows revision 2's image:\n%s", out)
			}

			out, err = kubectlKruise(env, "rollout", "history", f.ref, "--revision=2", "-o", "yaml")
			tpl := &corev1.PodTemplateSpec{}
			if err != nil || yaml.UnmarshalStrict([]byte(out), tpl) != nil || tpl.Spec.Containers[0].Image != "app:v2" {
				t.Errorf("-o yaml: %v\n%s", err, out)
			}
			out, err = kubectlKruise(env, "rollout", "history", f.ref, "--revision=1", "-o", "json")
			tpl = &corev1.PodTemplateSpec{}
			if err != nil || json.Unmarshal([]byte(out), tpl) != nil || tpl.Spec.Containers[0].Image != "app:v1" {
				t.Errorf("-o json: %v\n%s", err, out)
			}
			for args, says := range map[string]string{"--revision=9": "no revision 9", "--revision=-1": "positive",
				"--revision=1 -o=wide": `unable to match a printer suitable for the output format "wide"`} {
				if _, err := kubectlKruise(env, append([]string{"rollout", "history", f.ref}, strings.Fields(args)...)...); err == nil ||
					!strings.Contains(err.Error(), says) {
					t.Errorf("history %s: %v, want an error saying %q", args, err, says)
				}
			}
		})
	}
}

// undo --dry-run=client prints the template it would roll back to and changes nothing, as does
// --dry-run=server (the API server checks, keeps nothing); a template that is the revision's
// already is not rolled back.
func TestUndoDryRun(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(f.ref, func(t *testing.T) {
			env, c, _ := fakeEnv(t, f.objs...)
			image := func() string { return f.liveImage(t, c) }
			for _, dry := range []string{"--dry-run=client", "--dry-run", "--dry-run=true"} {
				out, err := kubectlKruise(env, "rollout", "undo", f.ref, dry)
				if err != nil || !strings.Contains(out, "would roll back to revision 1") || !strings.Contains(out, "Image:") ||
					!strings.Contains(out, "app:v1") {
					t.Errorf("undo %s: %v\n%s", dry, err, out)
				}
				if img := image(); img != "app:v2" {
					t.Errorf("undo %s changed the template to %s", dry, img)
				}
			}
			out, err := kubectlKruise(env, "rollout", "undo", f.ref, "--dry-run=server")
			if err != nil || !strings.Contains(out, "rolled back to revision 1") || !strings.Contains(out, "(server dry run)") {
				t.Errorf("undo --dry-run=server: %v\n%s", err, out)
			}
			if img := image(); img != "app:v2" {
				t.Errorf("undo --dry-run=server kept the change: %s", img)
			}
			if _, err := kubectlKruise(env, "rollout", "undo", f.ref, "--dry-run=maybe"); err == nil || !strings.Contains(err.Error(), `"none", "client" or "server"`) {
				t.Errorf("--dry-run=maybe: %v", err)
			}
			if out, err := kubectlKruise(env, "rollout", "undo", f.ref, "--to-revision=2", "--dry-run=none"); err != nil ||
				!strings.Contains(out, "skipped rollback") {
				t.Errorf("undo to the template's own revision: %v\n%s", err, out)
			}
		})
	}
}

// The description names every part of a template a rollback changes.
func TestDescribeTemplate(t *testing.T) {
	tpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"b": "2", "a": "1"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "runner",
			InitContainers:     []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh", "-c", "true"}}},
			Containers: []corev1.Container{{Name: "app", Image: "app:v1", Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
				Env: []corev1.EnvVar{{Name: "MODE", Value: "fast"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				EnvFrom:      []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-0"}}}},
		},
	}
	var out bytes.Buffer
	if err := describeTemplate(&out, tpl); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Labels:", "a=1\n", "b=2\n", "Annotations:", "<none>", "Service Account:", "runner",
		"Init Containers:\n   init:\n", "Command:", "sh\n", "Containers:\n   app:\n", "Ports:", "80/TCP", "Limits:", "memory: 64Mi",
		"MODE=fast", "POD=(from field metadata.name)", `every key of secret creds (prefix "")`, "/data from data (ro)",
		"data: persistent volume claim data-0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("description lacks %q:\n%s", want, out.String())
		}
	}
	if i, j := strings.Index(out.String(), "a=1"), strings.Index(out.String(), "b=2"); i > j {
		t.Errorf("labels not sorted:\n%s", out.String())
	}
}
