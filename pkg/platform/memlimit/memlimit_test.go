package memlimit

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func write(t *testing.T, root, file, content string) {
	t.Helper()
	path := filepath.Join(root, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCgroupLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		self  string
		want  int64
		ok    bool
	}{
		{"cgroup v2 in a container", map[string]string{"memory.max": "1073741824\n"}, "0::/\n", 1 << 30, true},
		{"cgroup v2 without a limit", map[string]string{"memory.max": "max\n"}, "0::/\n", 0, false},
		{"cgroup v2 service: its own limit", map[string]string{"system.slice/kruise.service/memory.max": "536870912\n",
			"system.slice/memory.max": "max\n"}, "0::/system.slice/kruise.service\n", 512 << 20, true},
		{"cgroup v2: a parent's lower limit", map[string]string{"a/memory.max": "1000\n", "a/b/memory.max": "2000\n"},
			"0::/a/b\n", 1000, true},
		{"cgroup v1 in a container", map[string]string{"memory/memory.limit_in_bytes": "536870912\n"},
			"4:memory:/docker/abc\n", 512 << 20, true},
		{"cgroup v1 nested, no limit at the root", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n",
			"memory/job/x/memory.limit_in_bytes": "4096000\n"}, "5:cpuacct:/\n4:memory:/job/x\n0::/\n", 4096000, true},
		{"cgroup v1 without a limit", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"},
			"4:memory:/\n", 0, false},
		{"no cgroup", nil, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for f, c := range tc.files {
				write(t, root, f, c)
			}
			got, ok, err := CgroupLimit(root, []byte(tc.self))
			if err != nil || got != tc.want || ok != tc.ok {
				t.Errorf("CgroupLimit = %d, %v, %v; want %d, %v", got, ok, err, tc.want, tc.ok)
			}
		})
	}
}

// Set gives the runtime ratio of the cgroup's limit, and leaves it alone with GOMEMLIMIT set,
// a ratio of 0 or no limit.
func TestSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	root := t.TempDir()
	write(t, root, "memory.max", "1000000000\n")
	self := filepath.Join(t.TempDir(), "cgroup")
	write(t, filepath.Dir(self), "cgroup", "0::/\n")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	if got, err := Set(root, self, 0.9); err != nil || got != 900000000 || debug.SetMemoryLimit(-1) != 900000000 {
		t.Errorf("Set = %d, %v; runtime limit %d; want 900000000", got, err, debug.SetMemoryLimit(-1))
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got, _ := Set(root, self, 0); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("ratio 0 set a limit: %d", got)
	}
	if _, err := Set(root, self, 1.5); err == nil {
		t.Error("a ratio over 1 was accepted")
	}
	t.Setenv("GOMEMLIMIT", "100MiB")
	if got, _ := Set(root, self, 0.9); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set, yet the limit was changed: %d", got)
	}
	t.Setenv("GOMEMLIMIT", "")
	if got, _ := Set(t.TempDir(), self, 0.9); got != 0 {
		t.Errorf("no cgroup limit, yet %d was set", got)
	}
}
