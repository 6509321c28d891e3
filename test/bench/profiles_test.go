package main

import (
	"slices"
	"testing"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

func TestParseProfiles(t *testing.T) {
	got, err := parseProfiles("rewrite, no-rewrite")
	if err != nil || !slices.Equal(got, []sandbox.NodeProfile{{}, {NoReadyRewrite: true}}) {
		t.Errorf("both: %v, %v", got, err)
	}
	for _, bad := range []string{"", "rewrite,rewrite", "silent"} {
		if _, err := parseProfiles(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
}

// The no-rewrite profile keeps the in-place rows alone, named with the profile; rewrite keeps all,
// named as always.
func TestProfileRows(t *testing.T) {
	rows := func() []result {
		var out []result
		for _, s := range []string{"scaleup", "inplace-maxu20", "inplace-maxu100", "asts-scaleup", "asts-inplace-maxu20",
			"ads-inplace-maxu20", "sidecarset-scaleup", "sidecarset-upgrade", "deployment-rollout", "floor-maxu20", "floor-maxu100"} {
			out = append(out, result{Scenario: s})
		}
		return out
	}
	name := func(rs []result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Scenario+" "+r.Profile)
		}
		return out
	}
	set := scenarioSet{}
	if got := name(set.forProfile(sandbox.NodeProfile{}).label(rows())); len(got) != 11 || got[0] != "scaleup rewrite" {
		t.Errorf("rewrite rows: %v", got)
	}
	want := []string{"inplace-maxu20/no-rewrite no-rewrite", "inplace-maxu100/no-rewrite no-rewrite", "asts-inplace-maxu20/no-rewrite no-rewrite",
		"ads-inplace-maxu20/no-rewrite no-rewrite", "sidecarset-upgrade/no-rewrite no-rewrite",
		"floor-maxu20/no-rewrite no-rewrite", "floor-maxu100/no-rewrite no-rewrite"}
	if got := name(set.forProfile(sandbox.NodeProfile{NoReadyRewrite: true}).label(rows())); !slices.Equal(got, want) {
		t.Errorf("no-rewrite rows: %v, want %v", got, want)
	}
	if !(scenarioSet{spreadOnly: true}).forProfile(sandbox.NodeProfile{NoReadyRewrite: true}).nothing() {
		t.Error("-spread-only runs something on the no-rewrite profile")
	}
}

func TestParseKinds(t *testing.T) {
	got, err := parseKinds("statefulset, daemonset")
	if err != nil || !slices.Equal(got, []string{"statefulset", "daemonset"}) {
		t.Errorf("two kinds: %v, %v", got, err)
	}
	set := scenarioSet{kinds: got}
	if !set.kindsOnly() || set.runs("cloneset") || !set.runs("daemonset") {
		t.Errorf("-kinds statefulset,daemonset: runs cloneset %v, daemonset %v", set.runs("cloneset"), set.runs("daemonset"))
	}
	if all, err := parseKinds(""); err != nil || all != nil || !(scenarioSet{kinds: all}).runs("sidecarset") || (scenarioSet{}).kindsOnly() {
		t.Errorf("no -kinds: %v, %v", all, err)
	}
	for _, bad := range []string{"cloneset,cloneset", "deployment", ","} {
		if _, err := parseKinds(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
}
