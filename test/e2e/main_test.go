// Package e2e holds end-to-end tests on a sandbox: a real control plane with kwok nodes.
package e2e

import (
	"errors"
	"os"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/test/harness"
)

// sb is the package's shared sandbox (3 kwok nodes); cs an admin client of it.
var (
	sb *sandbox.Sandbox
	cs kubernetes.Interface
)

func TestMain(m *testing.M) {
	harness.Main(m, func() (func() error, error) {
		var err error
		sb, err = harness.StartSandbox(3, os.Stderr)
		if err != nil {
			return nil, err
		}
		cfg, err := sb.RESTConfig()
		if err != nil {
			return nil, err
		}
		cfg.QPS, cfg.Burst = 400, 800 // shared by the tests that run in parallel
		cs = kubernetes.NewForConfigOrDie(cfg)
		return func() error { return errors.Join(checkManagerPermissions(), harness.Down(sb)) }, nil
	})
}
