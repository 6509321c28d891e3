package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// This file holds the host-level operations of the real node: what it needs from the machine and
// how it finds (and removes) what it left outside its folder. Everything here acts only on objects
// the sandbox named or recorded.

// hostPackage is a Debian package the real node needs, and the file that shows it is installed.
type hostPackage struct {
	Name string
	// Paths: the package counts as present when any of these exists.
	Paths []string
}

// busyboxPaths are where Debian's busybox-static puts the binary the images are built from.
var busyboxPaths = []string{"/bin/busybox", "/usr/bin/busybox"}

var hostPackages = []hostPackage{
	{"runc", []string{"/usr/sbin/runc", "/usr/bin/runc"}},
	{"busybox-static", busyboxPaths},
	{"containernetworking-plugins", []string{"/usr/lib/cni/bridge"}},
	{"iproute2", []string{"/usr/sbin/ip", "/sbin/ip", "/bin/ip", "/usr/bin/ip"}},
}

// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
const cniBinDir = "/usr/lib/cni"

func firstExisting(paths []string) string {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// ensureHostPackages installs the missing Debian packages with apt-get, or says which are missing
// and why they cannot be installed.
func ensureHostPackages(logf func(string, ...any)) error {
	var missing []string
	for _, p := range hostPackages {
		if firstExisting(p.Paths) == "" {
			missing = append(missing, p.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("the real node needs the packages %s, and this machine has no apt-get to install them",
			strings.Join(missing, ", "))
	}
	logf("installing %s with apt-get", strings.Join(missing, ", "))
	apt := func(args ...string) ([]byte, error) {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	install := append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)
	// The package lists are usually there; refresh them only when the install fails.
	if _, err := apt(install...); err == nil {
		return nil
	}
	if out, err := apt("update", "-qq"); err != nil {
		return fmt.Errorf("apt-get update (to install %s): %v\n%s", strings.Join(missing, " "), err, lastLines(string(out), 10))
	}
	if out, err := apt(install...); err != nil {
		return fmt.Errorf("apt-get install %s: %v\n%s", strings.Join(missing, " "), err, lastLines(string(out), 10))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// checkRealNodeHost says exactly why this machine cannot run a real node, or nil.
func checkRealNodeHost() error {
	if os.Geteuid() != 0 {
		return errors.New("--real-node needs root (the kubelet and containerd manage mounts, cgroups and network namespaces); run as root")
	}
	for _, ns := range []string{"net", "mnt", "pid", "ipc", "uts"} {
		if _, err := os.Stat("/proc/self/ns/" + ns); err != nil {
			return fmt.Errorf("--real-node needs Linux %s namespaces, and /proc/self/ns/%s is missing: %v", ns, ns, err)
		}
	}
	if len(cgroupMounts()) == 0 {
		return errors.New("--real-node needs cgroups, and no cgroup file system is mounted")
	}
	if !filesystemSupported("overlay") {
		// /proc/filesystems lists loaded file systems only: load the module if the kernel has one.
		_ = exec.Command("modprobe", "overlay").Run()
	}
	if !filesystemSupported("overlay") {
		return errors.New("--real-node needs the overlay file system (containerd's snapshotter), and /proc/filesystems does not list it")
	}
	return nil
}

func filesystemSupported(name string) bool {
	data, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[len(f)-1] == name {
			return true
		}
	}
	return false
}

// mountInfo is one line of /proc/self/mountinfo.
type mountInfo struct {
	MountPoint, FSType string
}

func readMounts() []mountInfo {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mountInfo
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// ID parent major:minor root mountpoint options [optional...] - fstype source superopts
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		out = append(out, mountInfo{MountPoint: unescapeMount(fields[4]), FSType: fields[sep+1]})
	}
	return out
}

// unescapeMount decodes the octal escapes (\040 for a space) of mountinfo paths.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroupMounts returns the mount points of every cgroup hierarchy (v1 controllers and v2).
func cgroupMounts() []string {
	var out []string
	for _, m := range readMounts() {
		if m.FSType == "cgroup" || m.FSType == "cgroup2" {
			out = append(out, m.MountPoint)
		}
	}
	return out
}

// MountsUnder lists the mount points at or below dir, deepest first.
func MountsUnder(dir string) []string {
	var out []string
	for _, m := range readMounts() {
		if m.MountPoint == dir || strings.HasPrefix(m.MountPoint, dir+"/") {
			out = append(out, m.MountPoint)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unmountAll unmounts everything at or below dir, deepest first; a busy mount is detached.
func unmountAll(dir string) error {
	var errs []error
	for range 3 { // stacked mounts show up again after the top one goes
		mounts := MountsUnder(dir)
		if len(mounts) == 0 {
			return nil
		}
		for _, m := range mounts {
			if err := syscall.Unmount(m, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
					errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
				}
			}
		}
	}
	if left := MountsUnder(dir); len(left) > 0 {
		errs = append(errs, fmt.Errorf("still mounted: %s", strings.Join(left, ", ")))
	}
	return errors.Join(errs...)
}

// CgroupDirs returns the folders of cgroup name (relative, e.g. "kruise-sandbox") that exist in
// any hierarchy.
func CgroupDirs(name string) []string {
	var out []string
	for _, m := range cgroupMounts() {
		d := filepath.Join(m, name)
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// createCgroup makes cgroup name in every hierarchy; in cpuset it copies the parent's CPUs and
// memory nodes (a cpuset cgroup without them cannot hold a process).
func createCgroup(name string) error {
	for _, m := range cgroupMounts() {
		d := filepath.Join(m, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", d, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if data, err := os.ReadFile(filepath.Join(m, f)); err == nil {
				cur, _ := os.ReadFile(filepath.Join(d, f))
				if strings.TrimSpace(string(cur)) == "" {
					if err := os.WriteFile(filepath.Join(d, f), data, 0o644); err != nil {
						return fmt.Errorf("set %s: %w", filepath.Join(d, f), err)
					}
				}
			}
		}
	}
	return nil
}

// cgroupPIDs lists the processes in cgroup name and its descendants, in every hierarchy.
func cgroupPIDs(name string) []int {
	seen := map[int]bool{}
	for _, root := range CgroupDirs(name) {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	out := make([]int, 0, len(seen))
	for pid := range seen {
		out = append(out, pid)
	}
	sort.Ints(out)
	return out
}

// removeCgroup kills the processes left in cgroup name (the real node's containers: nothing else
// runs there) and removes its folders bottom-up in every hierarchy.
func removeCgroup(name string) error {
	for attempt := 0; attempt < 50; attempt++ {
		pids := cgroupPIDs(name)
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var errs []error
	for _, root := range CgroupDirs(name) {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			var err error
			for range 20 { // a cgroup whose last process just died may be busy for a moment
				if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ProcessesMentioning lists the PIDs whose command line contains s (e.g. the sandbox's folder).
func ProcessesMentioning(s string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || procState(pid) == "Z" {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), s) {
			out = append(out, pid)
		}
	}
	return out
}

// ip runs the ip command.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// linkExists reports whether the network interface exists.
func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// hasAddress reports whether addr (CIDR form) is assigned to dev.
func hasAddress(dev, addr string) bool {
	out, err := exec.Command("ip", "-o", "addr", "show", "dev", dev).Output()
	return err == nil && strings.Contains(string(out), " "+addr+" ")
}

// killPID sends SIGKILL to pid; a process that is already gone is not an error.
func killPID(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
