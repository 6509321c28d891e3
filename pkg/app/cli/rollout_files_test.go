package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const dbManifest = "apiVersion: apps.kruise.io/v1beta1\nkind: StatefulSet\nmetadata:\n  name: db\n  namespace: ns\n"

// The rollout commands take the workloads manifest files name (-f, -k, -R) instead of TYPE/NAME,
// and run for each; objects of other kinds are refused, each named.
func TestRolloutFromFiles(t *testing.T) {
	fs := fixtures(t)
	var objs []client.Object
	for _, f := range fs {
		objs = append(objs, f.objs...)
	}
	dir := t.TempDir()
	both := writeFile(t, dir, "both.yaml", webManifest+"---\n"+dbManifest)
	db := writeFile(t, dir, "db.yaml", dbManifest)
	mixed := writeFile(t, dir, "mixed.yaml", svcManifest+"---\n"+webManifest)
	tree := t.TempDir()
	writeFile(t, tree, "web.yaml", webManifest)
	writeFile(t, tree, "deeper/db.yaml", dbManifest)
	kust := t.TempDir()
	writeFile(t, kust, "kustomization.yaml", "resources:\n- db.yaml\n")
	writeFile(t, kust, "db.yaml", dbManifest)

	env, c, _ := fakeEnv(t, objs...)
	get := func(f fixture) client.Object {
		t.Helper()
		obj := f.obj.DeepCopyObject().(client.Object)
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(f.obj), obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	run := func(want string, args ...string) {
		t.Helper()
		if out, err := kubectlKruise(env, args...); err != nil || !strings.Contains(out, want) {
			t.Errorf("%v: %v\n%s\nwant %q", args, err, out, want)
		}
	}
	pausedAre := func(db, web bool) {
		t.Helper()
		if paused(get(fs[0])) != db || paused(get(fs[1])) != web {
			t.Errorf("paused: db %t, web %t; want %t, %t", paused(get(fs[0])), paused(get(fs[1])), db, web)
		}
	}
	run("cloneset.apps.kruise.io/web paused\nstatefulset.apps.kruise.io/db paused\n", "rollout", "pause", "-f", both)
	pausedAre(true, true)
	run("statefulset.apps.kruise.io/db resumed", "rollout", "resume", "-k", kust)
	pausedAre(false, true)
	run("cloneset.apps.kruise.io/web resumed", "rollout", "resume", "-f", tree)
	pausedAre(false, false)
	run("statefulset.apps.kruise.io/db paused", "rollout", "pause", "-f", tree, "-R")
	pausedAre(true, true)
	wantError(t, env, `Service "front" in `+mixed, "rollout", "resume", "--filename", mixed)
	pausedAre(true, false)
	run("cloneset.apps.kruise.io/web paused", "rollout", "pause", "-f", both)
	run("cloneset.apps.kruise.io/web resumed", "rollout", "resume", "-f", tree) // not deeper/db.yaml without -R
	pausedAre(true, false)

	out, err := kubectlKruise(env, "rollout", "history", "-f", both, "-o", "name")
	if n := strings.Count(out, "controllerrevision.apps/"); err != nil || n != 4 {
		t.Errorf("history -f both -o name: %v, %d revisions\n%s", err, n, out)
	}
	out, err = kubectlKruise(env, "rollout", "history", "-f", both, "-o", "yaml")
	if docs := strings.Split(out, "---\n"); err != nil || len(docs) != 4 || !strings.HasPrefix(docs[3], "apiVersion: apps/v1\n") {
		t.Errorf("history -f both -o yaml: %v, want 4 documents, --- between them:\n%s", err, out)
	}
	run("cloneset.apps.kruise.io/web\nREVISION", "rollout", "history", "-f", both)
	run("statefulset.apps.kruise.io/db\nREVISION", "rollout", "history", "-f", db)
	run("statefulset.apps.kruise.io/db rolled back to revision 1", "rollout", "undo", "-f", db)
	if img := fs[0].tpl(get(fs[0])).Spec.Containers[0].Image; img != "app:v1" {
		t.Errorf("undo -f db.yaml: db runs %s", img)
	}
	if img := fs[1].tpl(get(fs[1])).Spec.Containers[0].Image; img != "app:v2" {
		t.Errorf("undo -f db.yaml: web runs %s", img)
	}
	run(`advanced statefulset "db"`, "rollout", "status", "-f", db, "--watch=false")
	wantError(t, env, "rollout status follows one workload: the files name 2 objects", "rollout", "status", "-f", both)
	run("statefulset.apps.kruise.io/db restarted", "rollout", "restart", "-f", db)
	wantError(t, env, "give no TYPE/NAME with them", "rollout", "pause", "clone/web", "-f", db)
	wantError(t, env, "give -f (with -R) or -k", "rollout", "pause", "-f", db, "-k", kust)
	wantError(t, env, "-k reads a kustomization", "rollout", "pause", "-k", kust, "-R")
	wantError(t, env, "the files name no object", "rollout", "pause", "-f", writeFile(t, dir, "empty.yaml", "# nothing\n"))
	wantError(t, env, "does not exist", "rollout", "pause", "-f", filepath.Join(dir, "missing.yaml"))
}

// A manifest's object without a namespace is in -n's; one in another namespace than an explicit -n
// is an error, as in kubectl.
func TestManifestNamespace(t *testing.T) {
	t.Setenv("KUBECONFIG", writeFile(t, t.TempDir(), "config", "apiVersion: v1\nkind: Config\n"))
	env := &Env{Flags: genericclioptions.NewConfigFlags(true)}
	*env.Flags.Namespace = "prod"
	dir := t.TempDir()
	ms, refused, err := env.readManifests(fileFlags{resource.FilenameOptions{Filenames: []string{writeFile(t, dir, "web.yaml", webManifest)}}})
	if err != nil || len(refused) > 0 || len(ms) != 1 || ms[0].obj.GetNamespace() != "prod" || ms[0].kind != CloneSetKind {
		t.Errorf("web.yaml with -n prod: %v %v %+v", err, refused, ms)
	}
	_, _, err = env.readManifests(fileFlags{resource.FilenameOptions{Filenames: []string{writeFile(t, dir, "api.yaml", apiManifest)}}})
	if err == nil || !strings.Contains(err.Error(), `is in namespace "ns", not "prod" as -n says`) {
		t.Errorf("api.yaml (namespace ns) with -n prod: %v", err)
	}
}
