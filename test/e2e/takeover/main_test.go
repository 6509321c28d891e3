// Package takeover proves that Kruise takes over a cluster OpenKruise v1.9.0 ran: the objects its
// own manager wrote (../shared/compat/openkruise-v1.9.0/takeover) are loaded into a sandbox before
// kruise-manager starts, and Kruise then touches nothing OpenKruise would not have touched, rolls
// each CloneSet, Advanced StatefulSet, Advanced DaemonSet, UnitedDeployment and SidecarSet forward in place, and lets CloneSets be
// deleted with their pods orphaned.
package takeover

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/compat"
	"github.com/kruise-ng/kruise/test/harness"
)

// graceLeft is how long after loading the deferred in-place update of cs-grace's first pod is due.
const graceLeft = 15 * time.Second

var (
	sb      *sandbox.Sandbox
	cs      kubernetes.Interface
	kc      client.Client
	fixture *compat.Takeover
	objs    *loaded
	// kruiseStart is the audit log's size when kruise-manager started: its writes come after.
	kruiseStart int64
	// startedAt is when kruise-manager was ready.
	startedAt time.Time
)

func TestMain(m *testing.M) {
	harness.Main(m, func() (func() error, error) {
		var err error
		if fixture, err = compat.ReadTakeover(harness.RepoRoot()); err != nil {
			return nil, fmt.Errorf("takeover fixture (set KRUISE_COMPAT_DIR): %w", err)
		}
		bin, err := harness.BuildManager()
		if err != nil {
			return nil, err
		}
		// The fixture's pods run on kwok-node-0..3.
		if sb, err = harness.StartSandboxWithoutKruise(4, os.Stderr); err != nil {
			return nil, err
		}
		teardown := func() error { return harness.Down(sb) }
		if err := setup(bin); err != nil {
			_ = teardown()
			return nil, err
		}
		return teardown, nil
	})
}

// setup loads the fixture with only Kruise's CRDs installed, then starts kruise-manager.
func setup(managerBin string) error {
	ctx := context.Background()
	cfg, err := sb.RESTConfig()
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	cs = kubernetes.NewForConfigOrDie(cfg)
	if kc, err = harness.NewKruiseClient(cfg); err != nil {
		return err
	}
	if err := sb.InstallCRDs(ctx); err != nil {
		return err
	}
	if objs, err = load(ctx, fixture, graceLeft); err != nil {
		return fmt.Errorf("load the takeover fixture: %w", err)
	}
	kruiseStart = harness.AuditSize(sb.AuditLog)
	if err := sb.StartKruise(ctx, managerBin); err != nil {
		return err
	}
	startedAt = time.Now()
	return nil
}
