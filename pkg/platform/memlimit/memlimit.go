package memlimit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// CgroupRoot is where cgroups are mounted; SelfCgroup lists the process's.
const (
	CgroupRoot = "/sys/fs/cgroup"
	SelfCgroup = "/proc/self/cgroup"
)

// CgroupLimit is the memory limit, in bytes, of the process's cgroup whose hierarchies are
// mounted at root and listed in self (the content of /proc/self/cgroup): the lowest limit of
// the cgroup and its ancestors, from memory.max (cgroup v2) or memory.limit_in_bytes (v1, under
// root/memory). Inside a container the cgroup is usually root itself. ok is false when no limit
// is set ("max", or v1's page-rounded maximum).
func CgroupLimit(root string, self []byte) (limit int64, ok bool, err error) {
	v2, v1 := "/", "/"
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			v1 = parts[2]
		}
	}
	limit = math.MaxInt64
	for _, h := range []struct{ dir, path, file string }{
		{root, v2, "memory.max"}, {filepath.Join(root, "memory"), v1, "memory.limit_in_bytes"}} {
		for _, dir := range ancestors(h.dir, h.path) {
			n, found, err := readLimit(filepath.Join(dir, h.file))
			if err != nil {
				return 0, false, err
			}
			if found && n < limit {
				limit, ok = n, true
			}
		}
	}
	if !ok {
		return 0, false, nil
	}
	return limit, true, nil
}

// ancestors are dir and the folders of path under it, from dir down.
func ancestors(dir, path string) []string {
	out := []string{dir}
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		if part == "" || part == "." || part == ".." {
			continue
		}
		dir = filepath.Join(dir, part)
		out = append(out, dir)
	}
	return out
}

// readLimit reads one limit file; found is false when it does not exist or sets no limit.
func readLimit(file string) (limit int64, found bool, err error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", file, err)
	}
	// cgroup v1 says "no limit" with the largest page-aligned int64.
	if n <= 0 || n >= math.MaxInt64/2 {
		return 0, false, nil
	}
	return n, true, nil
}

// Set sets the runtime's soft memory limit to ratio of the process's cgroup limit (CgroupLimit
// of root and the file self), unless GOMEMLIMIT is set or ratio is 0. It returns the limit set (0:
// none).
func Set(root, self string, ratio float64) (int64, error) {
	if ratio <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	if ratio > 1 {
		return 0, fmt.Errorf("memory limit ratio %v: want at most 1", ratio)
	}
	cgroups, err := os.ReadFile(self)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	limit, ok, err := CgroupLimit(root, cgroups)
	if err != nil || !ok {
		return 0, err
	}
	soft := int64(float64(limit) * ratio)
	debug.SetMemoryLimit(soft)
	return soft, nil
}
