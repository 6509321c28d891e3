// Command installgen writes the Helm chart's generated templates (charts/kruise/templates/generated)
// from the manifests in config/; `make generate` runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kruise-ng/kruise/pkg/install"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: installgen DIR")
		os.Exit(2)
	}
	files, err := install.ChartTemplates()
	if err != nil {
		fmt.Fprintln(os.Stderr, "installgen:", err)
		os.Exit(1)
	}
	dir := os.Args[1]
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "installgen:", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "installgen:", err)
		os.Exit(1)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "installgen:", err)
			os.Exit(1)
		}
	}
}
