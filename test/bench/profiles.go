package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// Node profiles (-profiles): the kwok nodes' kubelet rewrites a Ready False it did not compute
// (rewrite, a kubelet's behaviour: the in-place engine waits for that answer), or does not
// (no-rewrite: the engine learns the node is silent and stops waiting for it; docs/sandbox.md).
// Each profile runs on a sandbox of its own, one after the other: rewrite every scenario the flags
// select, named as always; no-rewrite only the in-place rollouts among them (and the floor), their
// rows named SCENARIO/no-rewrite.
var knownProfiles = []sandbox.NodeProfile{{}, {NoReadyRewrite: true}}

// parseProfiles reads -profiles: names among rewrite and no-rewrite, comma-separated, each once.
func parseProfiles(s string) ([]sandbox.NodeProfile, error) {
	var out []sandbox.NodeProfile
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(knownProfiles, func(p sandbox.NodeProfile) bool { return p.Name() == name })
		if i < 0 {
			return nil, fmt.Errorf("-profiles: unknown profile %q (rewrite, no-rewrite)", name)
		}
		if slices.Contains(out, knownProfiles[i]) {
			return nil, fmt.Errorf("-profiles: %s twice", name)
		}
		out = append(out, knownProfiles[i])
	}
	return out, nil
}

// benchKinds are the workload kinds -kinds selects, in the order they run.
var benchKinds = []string{"cloneset", "statefulset", "daemonset", "sidecarset"}

// parseKinds reads -kinds: names among benchKinds, comma-separated, each once; empty selects none
// (every scenario runs).
func parseKinds(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(benchKinds, name) {
			return nil, fmt.Errorf("-kinds: unknown kind %q (%s)", name, strings.Join(benchKinds, ", "))
		}
		if slices.Contains(out, name) {
			return nil, fmt.Errorf("-kinds: %s twice", name)
		}
		out = append(out, name)
	}
	return out, nil
}

// scenarioSet is what one sandbox runs.
type scenarioSet struct {
	floor, spreadOnly bool
	// kinds (-kinds): only these kinds' scenarios run (no Deployment, webhook or spread latency);
	// nil: all of them.
	kinds []string
	// inPlaceOnly: the in-place rollouts alone (with what they need first, unprinted).
	inPlaceOnly bool
	profile     sandbox.NodeProfile
	// suffix names the rows of a profile other than rewrite ("/no-rewrite").
	suffix string
}

// forProfile is set as a sandbox of profile p runs it.
func (set scenarioSet) forProfile(p sandbox.NodeProfile) scenarioSet {
	set.profile = p
	if p.NoReadyRewrite {
		set.inPlaceOnly, set.suffix = true, "/"+p.Name()
	}
	return set
}

// runs reports whether set runs the scenarios of kind.
func (set scenarioSet) runs(kind string) bool {
	return set.kinds == nil || slices.Contains(set.kinds, kind)
}

// kindsOnly reports whether -kinds narrowed set to some kinds' scenarios.
func (set scenarioSet) kindsOnly() bool { return set.kinds != nil }

// nothing reports whether set runs no scenario (-spread-only on a later profile).
func (set scenarioSet) nothing() bool { return set.inPlaceOnly && set.spreadOnly && !set.floor }

// label names results of set's profile: the in-place rows only when inPlaceOnly, each named with
// the suffix and its profile.
func (set scenarioSet) label(results []result) []result {
	out := results[:0]
	for _, r := range results {
		if set.inPlaceOnly && !inPlace(r.Scenario) {
			continue
		}
		r.Scenario += set.suffix
		r.Profile = set.profile.Name()
		out = append(out, r)
	}
	return out
}
