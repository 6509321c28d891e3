package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// --username and --password are accepted as flags and refused, naming what to use instead.
func TestBasicAuthFlagsRefused(t *testing.T) {
	env, _, _ := fakeEnv(t)
	wantError(t, env, "basic authentication (--username/--password) was removed", "--username", "admin", "version")
	wantError(t, env, "--password: basic authentication", "--password=secret", "version")
}

// --match-server-version compares the server's Kubernetes major.minor with client-go's.
func TestMatchServerVersion(t *testing.T) {
	major, minor := clientKubeVersion()
	if major != "1" || minor != "37" {
		t.Errorf("client version %s.%s, want 1.37 (client-go v0.37)", major, minor)
	}
	env, _, _ := fakeEnv(t)
	env.serverVersion = func() (*apimachineryversion.Info, error) {
		return &apimachineryversion.Info{Major: "1", Minor: "36", GitVersion: "v1.36.4"}, nil
	}
	wantError(t, env, "the server is Kubernetes 1.36 (v1.36.4), kubectl-kruise's client is 1.37", "--match-server-version", "version")
	if _, err := kubectlKruise(env, "version"); err != nil {
		t.Errorf("without --match-server-version: %v", err)
	}
	env.serverVersion = func() (*apimachineryversion.Info, error) {
		return &apimachineryversion.Info{Major: "1", Minor: "37+", GitVersion: "v1.37.2-eks"}, nil
	}
	if _, err := kubectlKruise(env, "--match-server-version", "version"); err != nil {
		t.Errorf("1.37+ server: %v", err)
	}
}

// --warnings-as-errors: the rest config the flags give records the server's warnings, printed
// as kubectl prints them, and the command then fails.
func TestWarningsAsErrors(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://api.example:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, asErrors := range []bool{false, true} {
		env, _, out := fakeEnv(t)
		*env.Flags.KubeConfig = kubeconfig
		env.global.warningsAsErrors = asErrors
		if err := env.before(&cobra.Command{}); err != nil {
			t.Fatal(err)
		}
		cfg, err := env.restConfig()
		if err != nil {
			t.Fatal(err)
		}
		cfg.WarningHandlerWithContext.HandleWarningHeaderWithContext(context.Background(), 299, "-", "apps.kruise.io/v1alpha1 is old")
		err = env.after(nil)
		if !strings.Contains(out.String(), "Warning: apps.kruise.io/v1alpha1 is old") {
			t.Errorf("warning not printed: %q", out)
		}
		if asErrors != (err != nil && strings.Contains(err.Error(), "1 warning(s) received")) {
			t.Errorf("--warnings-as-errors=%t: %v", asErrors, err)
		}
	}
}

// --profile writes the profile it names to --profile-output when the command ends.
func TestProfile(t *testing.T) {
	env, _, _ := fakeEnv(t)
	for _, name := range []string{"cpu", "heap", "goroutine", "threadcreate", "block", "mutex"} {
		path := filepath.Join(t.TempDir(), name+".pprof")
		if _, err := kubectlKruise(env, "--profile", name, "--profile-output", path, "version"); err != nil {
			t.Fatalf("--profile %s: %v", name, err)
		}
		if st, err := os.Stat(path); err != nil || st.Size() == 0 {
			t.Errorf("--profile %s: %v", name, err)
		}
	}
	wantError(t, env, `--profile "disk": want none, cpu`, "--profile", "disk", "version")
}
