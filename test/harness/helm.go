package harness

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// Helm runs the checkout's bin/helm against sb from the repository root (chart paths such as
// charts/kruise are relative to it); the test fails with helm's output if helm does.
func Helm(t testing.TB, sb *sandbox.Sandbox, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(RepoRoot(), "bin", "helm"), append(args, "--kubeconfig", sb.Kubeconfig())...)
	cmd.Dir = RepoRoot()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
}
