package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ModulePath is the Go module whose checkout holds bin/k8s, where `make tools` puts the binaries.
const ModulePath = "github.com/kruise-ng/kruise"

// Binaries are the paths of the executables a sandbox runs.
type Binaries struct {
	Etcd                  string
	KubeAPIServer         string
	KubeControllerManager string
	KubeScheduler         string
	Kwok                  string
}

// BinariesIn returns the binaries expected in dir (the layout of bin/k8s).
func BinariesIn(dir string) Binaries {
	return Binaries{
		Etcd:                  filepath.Join(dir, "etcd"),
		KubeAPIServer:         filepath.Join(dir, "kube-apiserver"),
		KubeControllerManager: filepath.Join(dir, "kube-controller-manager"),
		KubeScheduler:         filepath.Join(dir, "kube-scheduler"),
		Kwok:                  filepath.Join(dir, "kwok"),
	}
}

// Check reports every binary that is missing or not executable, with the command that builds it.
func (b Binaries) Check() error {
	var missing []string
	for _, p := range []string{b.Etcd, b.KubeAPIServer, b.KubeControllerManager, b.KubeScheduler, b.Kwok} {
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing binaries: %s; run `make tools` in the Kruise checkout to build them",
			strings.Join(missing, ", "))
	}
	return nil
}

// DefaultBinDir returns the bin/k8s folder of the Kruise checkout: $KRUISE_BIN_DIR when set,
// else found by walking up from the working directory, then from this executable's folder.
func DefaultBinDir() (string, error) {
	if d := os.Getenv("KRUISE_BIN_DIR"); d != "" {
		return d, nil
	}
	starts := []string{}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, s := range starts {
		if root, ok := FindRepoRoot(s); ok {
			return filepath.Join(root, "bin", "k8s"), nil
		}
	}
	return "", errors.New("cannot find the Kruise checkout (a go.mod of " + ModulePath +
		") above the working directory; pass --bin-dir or set KRUISE_BIN_DIR")
}

// FindRepoRoot walks up from dir to the folder whose go.mod declares ModulePath.
func FindRepoRoot(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), "module "+ModulePath+"\n") {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
