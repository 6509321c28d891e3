package webhookfuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kruise-ng/kruise/test/compat"
)

type document struct {
	file string
	data []byte
}

// oracleSamples are the YAML documents of OpenKruise v1.9.0's samples and takeover fixture (the
// compat oracle beside the checkout, or $KRUISE_COMPAT_DIR), real objects of Kruise's kinds and
// pods; none when the oracle is absent (the hand-written seeds still run).
func oracleSamples(tb testing.TB) []document {
	root, err := repoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	dir := compat.OracleDir(root)
	var docs []document
	for _, sub := range []string{"samples", "takeover"} {
		_ = filepath.WalkDir(filepath.Join(dir, sub), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				tb.Fatal(err)
			}
			for _, doc := range bytes.Split(data, []byte("\n---")) {
				if len(bytes.TrimSpace(doc)) > 0 {
					docs = append(docs, document{file: path, data: doc})
				}
			}
			return nil
		})
	}
	if len(docs) == 0 {
		tb.Logf("no OpenKruise samples in %s: seeding with the hand-written objects only", dir)
	}
	return docs
}

// repoRoot is the folder of the go.mod above the working directory (a test's package folder).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
