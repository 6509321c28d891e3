package e2enode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// hostState is what a real node could leave on the machine outside its folder.
type hostState struct {
	mounts     []string // mount points
	netns      []string // named network namespaces
	links      []string // network interfaces
	loAddrs    string   // addresses on the loopback interface
	cgroups    []string // folders of the real node's cgroup, in every hierarchy
	hostPaths  []string // the shared host folders the real node may create
	cniResults []string // libcni cache entries
	iptables   []string // chains and rules of iptables and ip6tables, when installed
}

func snapshotHost() hostState {
	var s hostState
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if f := strings.Fields(line); len(f) > 4 {
				s.mounts = append(s.mounts, f[4])
			}
		}
	}
	s.netns = names("/var/run/netns")
	s.links = names("/sys/class/net")
	if out, err := exec.Command("ip", "-o", "addr", "show", "dev", "lo").Output(); err == nil {
		s.loAddrs = strings.TrimSpace(string(out))
	}
	s.cgroups = sandbox.CgroupDirs(sandbox.RealCgroupRoot)
	for _, p := range []string{sandbox.RealRunDir, "/var/lib/kubelet", "/var/log/containers", "/var/log/pods",
		"/var/lib/cni", "/run/containerd", "/var/lib/containerd", "/opt/containerd", "/var/run/nri"} {
		if _, err := os.Lstat(p); err == nil {
			s.hostPaths = append(s.hostPaths, p)
		}
	}
	s.cniResults = names("/var/lib/cni/results")
	for _, tool := range []string{"iptables", "ip6tables"} {
		out, err := exec.Command(tool + "-save").Output()
		if err != nil {
			continue // not installed: the kubelet cannot add chains either
		}
		table := ""
		for _, line := range strings.Split(string(out), "\n") {
			switch {
			case strings.HasPrefix(line, "*"):
				table = line[1:]
			case strings.HasPrefix(line, ":"):
				s.iptables = append(s.iptables, fmt.Sprintf("%s %s chain %s", tool, table, strings.Fields(line[1:])[0]))
			case strings.HasPrefix(line, "-A "):
				s.iptables = append(s.iptables, fmt.Sprintf("%s %s %s", tool, table, line))
			}
		}
	}
	for _, l := range [][]string{s.mounts, s.netns, s.links, s.cgroups, s.hostPaths, s.cniResults, s.iptables} {
		sort.Strings(l)
	}
	return s
}

func names(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// diff lists what after has that s had not (and what it lost), per kind.
func (s hostState) diff(after hostState) []string {
	var out []string
	for _, k := range []struct {
		what          string
		before, after []string
	}{
		{"mounts", s.mounts, after.mounts},
		{"network namespaces", s.netns, after.netns},
		{"network interfaces", s.links, after.links},
		{"cgroups", s.cgroups, after.cgroups},
		{"host folders", s.hostPaths, after.hostPaths},
		{"CNI cache entries", s.cniResults, after.cniResults},
		{"iptables chains and rules", s.iptables, after.iptables},
	} {
		added, removed := setDiff(k.before, k.after), setDiff(k.after, k.before)
		if len(added) > 0 {
			out = append(out, fmt.Sprintf("%s left behind: %s", k.what, strings.Join(added, ", ")))
		}
		if len(removed) > 0 {
			out = append(out, fmt.Sprintf("%s removed that the sandbox did not create: %s", k.what, strings.Join(removed, ", ")))
		}
	}
	if s.loAddrs != after.loAddrs {
		out = append(out, fmt.Sprintf("loopback addresses changed:\nbefore: %s\nafter:  %s", s.loAddrs, after.loAddrs))
	}
	return out
}

// setDiff returns the elements of b not in a.
func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range a {
		in[x] = true
	}
	var out []string
	for _, x := range b {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}
