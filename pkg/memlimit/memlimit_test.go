package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestContainerLimit(t *testing.T) {
	for _, tc := range []struct {
		name, file, content string
		want                int64
		ok                  bool
	}{
		{"cgroup v2 limit", "memory.max", "1073741824\n", 1 << 30, true},
		{"cgroup v2 without a limit", "memory.max", "max\n", 0, false},
		{"cgroup v1 limit", "memory/memory.limit_in_bytes", "536870912\n", 512 << 20, true},
		{"cgroup v1 without a limit", "memory/memory.limit_in_bytes", "9223372036854771712\n", 0, false},
		{"no cgroup", "", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.file != "" {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(root, tc.file)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, tc.file), []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok, err := ContainerLimit(root)
			if err != nil || got != tc.want || ok != tc.ok {
				t.Errorf("ContainerLimit = %d, %v, %v; want %d, %v", got, ok, err, tc.want, tc.ok)
			}
		})
	}
}

// Set gives the runtime ratio of the container's limit, and leaves it alone with GOMEMLIMIT set,
// a ratio of 0 or no limit.
func TestSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "memory.max"), []byte("1000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	if got, err := Set(root, 0.9); err != nil || got != 900000000 || debug.SetMemoryLimit(-1) != 900000000 {
		t.Errorf("Set = %d, %v; runtime limit %d; want 900000000", got, err, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got, _ := Set(root, 0); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("ratio 0 set a limit: %d", got)
	}
	if _, err := Set(root, 1.5); err == nil {
		t.Error("a ratio over 1 was accepted")
	}
	t.Setenv("GOMEMLIMIT", "100MiB")
	if got, _ := Set(root, 0.9); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set, yet the limit was changed: %d", got)
	}
	t.Setenv("GOMEMLIMIT", "")
	if got, _ := Set(t.TempDir(), 0.9); got != 0 {
		t.Errorf("no container limit, yet %d was set", got)
	}
}
