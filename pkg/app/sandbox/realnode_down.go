package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// cleanRealNode removes what the real node left outside its processes, after they stopped: the
// shims, the containers (by their cgroup), mounts and network namespaces under DIR, the bridge,
// the loopback address, the run folder, and its entries in the host's shared folders.
func (s *Sandbox) cleanRealNode() error {
	rn := s.RealNode
	var errs []error
	// Shims outlive containerd; they name its socket on their command line.
	for range 50 {
		pids := ProcessesMentioning(ContainerdSocket())
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			s.logf("stopping containerd shim (pid %d)", pid)
			_ = killPID(pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if left := ProcessesMentioning(ContainerdSocket()); len(left) > 0 {
		errs = append(errs, fmt.Errorf("containerd shims still run: %v", left))
	}
	if err := removeCgroup(RealCgroupRoot); err != nil {
		errs = append(errs, err)
	}
	if err := unmountAll(s.Dir); err != nil {
		errs = append(errs, err)
	}
	if err := unmountAll(RealRunDir); err != nil {
		errs = append(errs, err)
	}
	if linkExists(realBridge) {
		if err := ip("link", "del", realBridge); err != nil {
			errs = append(errs, err)
		}
	}
	if rn.IPTablesBefore != nil {
		if err := removeNewIPTablesChains(rn.IPTablesBefore); err != nil {
			errs = append(errs, err)
		}
	}
	if rn.AddedAddress && hasAddress("lo", RealNodeIP+"/32") {
		if err := ip("addr", "del", RealNodeIP+"/32", "dev", "lo"); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, removeEntries(hostContainerLogs, func(name, target string) bool {
		return strings.HasPrefix(target, filepath.Join(s.Dir, kubeletDir)+"/")
	}))
	// libcni caches one result per network and pod sandbox: ours (named after our network), and
	// containerd's loopback entry of each of our pod sandboxes.
	results := filepath.Join(hostCNICache, "results")
	ours := map[string]bool{} // our pod sandbox IDs
	if entries, err := os.ReadDir(results); err == nil {
		for _, e := range entries {
			if id, ok := strings.CutPrefix(e.Name(), realCNINetwork+"-"); ok {
				ours[strings.SplitN(id, "-", 2)[0]] = true
			}
		}
	}
	errs = append(errs, removeEntries(results, func(name, _ string) bool {
		if strings.HasPrefix(name, realCNINetwork+"-") {
			return true
		}
		id, ok := strings.CutPrefix(name, "cni-loopback-")
		return ok && ours[strings.SplitN(id, "-", 2)[0]]
	}))
	if errors.Join(errs...) == nil {
		if err := os.RemoveAll(RealRunDir); err != nil {
			errs = append(errs, err)
		}
		// Host folders the real node created go when they are empty (another user may have filled them).
		for i := len(rn.CreatedHostDirs) - 1; i >= 0; i-- {
			removeEmptyTree(rn.CreatedHostDirs[i])
		}
	}
	return errors.Join(errs...)
}

// removeEntries removes the entries of dir (files or symlinks) for which match holds; target is a
// symlink's destination.
func removeEntries(dir string, match func(name, target string) bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var errs []error
	for _, e := range entries {
		target, _ := os.Readlink(filepath.Join(dir, e.Name()))
		if match(e.Name(), target) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeEmptyTree removes dir if it holds nothing but folders and unix sockets (the kubelet's
// device-plugin socket, which --root-dir does not move); a regular file keeps it.
func removeEmptyTree(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		switch p := filepath.Join(dir, e.Name()); {
		case e.IsDir():
			removeEmptyTree(p)
		case e.Type()&os.ModeSocket != 0:
			_ = os.Remove(p)
		}
	}
	_ = os.Remove(dir)
}
