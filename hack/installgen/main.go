// Command installgen writes the Helm chart's generated templates (charts/kruise/templates/generated)
// from the manifests in config/; `make generate` runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kruise-ng/kruise/pkg/app/install"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: installgen DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "installgen:", err)
		os.Exit(1)
	}
}

// write replaces dir's content with the chart's generated templates.
func write(dir string) error {
	files, err := install.ChartTemplates()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
