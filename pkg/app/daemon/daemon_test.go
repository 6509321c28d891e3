package daemon

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kruise-ng/kruise/pkg/node/criruntime"
)

func TestValidate(t *testing.T) {
	ok := Options{NodeName: "n", RuntimeTimeout: time.Second, HealthAddr: ":10221", PullWorkers: 2, CRRWorkers: 4, ProbeWorkers: 8}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Options{HealthAddr: "nope", MaxPreStop: -time.Second}
	err := bad.Validate()
	for _, want := range []string{"--node-name (or $NODE_NAME) is required", "--runtime-timeout must be positive", "--health-probe-bind-address",
		"--max-workers-for-pull-image", "--max-workers-for-crr must be at least 1", "--max-workers-for-pod-probe must be at least 1", "--max-prestop-duration must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestFlagDefaults(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("kruise-daemon", flag.ContinueOnError)
	o.BindFlags(fs, "n")
	if err := fs.Parse([]string{"--max-prestop-duration=0"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil || o.CRRWorkers != 4 || o.MaxPreStop != 0 {
		t.Errorf("defaults with --max-prestop-duration=0: %+v, %v", o, err)
	}
}

func TestConnectWithoutRuntime(t *testing.T) {
	saved := criruntime.Candidates
	defer func() { criruntime.Candidates = saved }()
	criruntime.Candidates = []string{"unix://" + t.TempDir() + "/none.sock"}
	if _, err := criruntime.Connect(context.Background(), "", time.Second); err == nil || !strings.Contains(err.Error(), "no container runtime socket found") {
		t.Errorf("auto-detection with no socket: %v", err)
	}
	if _, err := criruntime.Connect(context.Background(), "unix://"+t.TempDir()+"/none.sock", time.Second); err == nil ||
		!strings.Contains(err.Error(), "no container runtime answered") {
		t.Errorf("an endpoint with nothing behind it: %v", err)
	}
}

// Profiling is off unless --pprof-bind-address names an address; the handler serves Go's profiles.
func TestPprof(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("kruise-daemon", flag.ContinueOnError)
	o.BindFlags(fs, "n")
	if err := fs.Parse(nil); err != nil || o.PprofAddr != "0" {
		t.Errorf("--pprof-bind-address defaults to %q (%v), want \"0\" (off)", o.PprofAddr, err)
	}
	srv := httptest.NewServer(PprofHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Errorf("/debug/pprof/: %d %.200s", resp.StatusCode, body)
	}
}
