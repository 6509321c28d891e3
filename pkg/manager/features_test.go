package manager

import (
	"strings"
	"testing"
)

func TestParseFeatureGates(t *testing.T) {
	g, err := ParseFeatureGates("")
	if err != nil || g.Enabled(CloneSetPartitionRollback) {
		t.Fatalf("defaults: %v, %v; want CloneSetPartitionRollback off", g, err)
	}
	g, err = ParseFeatureGates(" CloneSetPartitionRollback=true ")
	if err != nil || !g.Enabled(CloneSetPartitionRollback) {
		t.Fatalf("CloneSetPartitionRollback=true: %v, %v", g, err)
	}
	for spec, want := range map[string]string{
		"Nope=true":                       `unknown feature gate "Nope" (this build implements: CloneSetPartitionRollback, CloneSetShortHash, InPlaceUpdateEnvFromMetadata, InPlaceWorkloadVerticalScaling, PreDownloadImageForInPlaceUpdate, RecreatePodWhenChangeVCTInCloneSetGate)`,
		"CloneSetPartitionRollback":       "is not Name=true|false",
		"CloneSetPartitionRollback=maybe": "is not a boolean",
	} {
		if _, err := ParseFeatureGates(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", spec, err, want)
		}
	}
}
