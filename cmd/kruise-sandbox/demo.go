package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kruise-ng/kruise/pkg/app/demo"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

func demoCmd(args []string, stdout, stderr io.Writer) error {
	fs, dir := newFlags("demo", stderr)
	uf := addUpFlags(fs, 3, 3*time.Minute)
	replicas := fs.Int("replicas", 50, "pods of the demo CloneSet")
	canary := fs.Int("canary", 5, "pods updated first, held by the partition")
	maxUnavailable := fs.String("max-unavailable", "20%", "the CloneSet's updateStrategy.maxUnavailable")
	check := fs.Duration("canary-check", 3*time.Second, "how long the canary pods must stay ready before the rest is updated")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg, err := uf.config(*dir, true, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, _, err = demo.Run(ctx, demo.Config{Sandbox: cfg, Replicas: int32(*replicas), Canary: int32(*canary),
		MaxUnavailable: *maxUnavailable, CanaryCheck: *check, Out: stdout, Live: isTerminal(stdout),
		Explore: func(sb *sandbox.Sandbox) string { return explore(sb, cfg.BinDir, *dir) }})
	return err
}

// explore says how to use the demo's cluster and how to tear it down.
func explore(sb *sandbox.Sandbox, binDir, dir string) string {
	self, _ := os.Executable()
	bin := filepath.Dir(self)
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe cluster stays up. Explore it (kubectl and kubectl-kruise are in %s and %s):\n", bin, binDir)
	fmt.Fprintf(&b, "  export KUBECONFIG=%s\n", sb.Kubeconfig())
	fmt.Fprintf(&b, "  export PATH=%s:%s:$PATH\n", bin, binDir)
	for _, c := range []string{
		"kubectl get clone demo -o wide",
		"kubectl get pods -l app=demo -o wide            # RESTARTS 1, AGE from before the rollout",
		"kubectl kruise rollout status clone/demo",
		"kubectl kruise rollout history clone/demo",
		"kubectl kruise rollout undo clone/demo           # back to v1, in place again",
		"kubectl kruise rollout plan clone/demo",
	} {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	makeDown := "make sandbox-down"
	if filepath.Clean(dir) != ".sandbox" {
		makeDown += " SANDBOX_DIR=" + dir
	}
	fmt.Fprintf(&b, "Tear it down:\n  %s    # or: %s down --dir %s\n", makeDown, shortPath(self), dir)
	return b.String()
}

// isTerminal says whether w is a character device (a terminal), where progress redraws in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
