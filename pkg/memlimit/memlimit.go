// Package memlimit gives a Kruise process a soft memory limit below its container's: the Go
// runtime collects harder as the heap nears it, instead of letting the heap grow to twice the
// live objects (GOGC 100) and the kernel kill the process at the container's limit. A 10,000-pod
// rollout briefly needs more than its cache; near the limit, the runtime pays for it in CPU.
//
// GOMEMLIMIT, when set, wins: the runtime has read it already and nothing is changed.
package memlimit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// CgroupRoot is where the process's cgroup (v2) or memory cgroup (v1) is mounted in a container.
const CgroupRoot = "/sys/fs/cgroup"

// ContainerLimit reads the memory limit of the cgroup mounted at root, in bytes: memory.max
// (cgroup v2) or memory/memory.limit_in_bytes (v1). ok is false when there is none ("max", or
// v1's page-rounded maximum).
func ContainerLimit(root string) (limit int64, ok bool, err error) {
	for _, f := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, os.ErrNotExist) {
			continue
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
			return 0, false, fmt.Errorf("%s: %w", f, err)
		}
		// cgroup v1 says "no limit" with the largest page-aligned int64.
		if n <= 0 || n >= math.MaxInt64/2 {
			return 0, false, nil
		}
		return n, true, nil
	}
	return 0, false, nil
}

// Set sets the runtime's soft memory limit to ratio of the container's limit read under root,
// unless GOMEMLIMIT is set or ratio is 0. It returns the limit set (0: none).
func Set(root string, ratio float64) (int64, error) {
	if ratio <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	if ratio > 1 {
		return 0, fmt.Errorf("memory limit ratio %v: want at most 1", ratio)
	}
	limit, ok, err := ContainerLimit(root)
	if err != nil || !ok {
		return 0, err
	}
	soft := int64(float64(limit) * ratio)
	debug.SetMemoryLimit(soft)
	return soft, nil
}
