package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kruise-ng/kruise/test/harness"
)

// Every CRD of the oracle must have a generated counterpart in config/crd/bases that matches it on
// the wire, but for Kruise's listed additions (Additions), each of which it must have.
func TestCRDsMatchTheOracle(t *testing.T) {
	oracle := filepath.Join(OracleDir(harness.RepoRoot()), "crds")
	files, err := filepath.Glob(filepath.Join(oracle, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no oracle CRDs in %s (set KRUISE_COMPAT_DIR to the openkruise-v1.9.0 folder): %v", oracle, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			ourFile := filepath.Join(harness.CRDDir(), name)
			if _, err := os.Stat(ourFile); err != nil {
				t.Fatalf("our CRD %s is missing: run `make generate`", ourFile)
			}
			theirs, err := ReadCRD(f)
			if err != nil {
				t.Fatal(err)
			}
			ours, err := ReadCRD(ourFile)
			if err != nil {
				t.Fatal(err)
			}
			if add, ok := Additions[name]; ok {
				if ours, err = WithoutAdditions(ours, add); err != nil {
					t.Fatalf("Kruise's listed additions: %v", err)
				}
			}
			for _, d := range Diff(ours, theirs) {
				t.Error(d)
			}
		})
	}
}
