package manager

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseFeatureGates(t *testing.T) {
	g, err := ParseFeatureGates("")
	if err != nil || g.Enabled(CloneSetPartitionRollback) || !g.Enabled(InPlaceUpdateEnvFromMetadata) || !g.Enabled("PodWebhook") {
		t.Fatalf("defaults: %v, %v; want OpenKruise's (CloneSetPartitionRollback off, InPlaceUpdateEnvFromMetadata and PodWebhook on)", g, err)
	}
	if len(g) != 36 || len(g.Unimplemented()) != 0 {
		t.Errorf("%d gates (want OpenKruise v1.9.0's 36), unimplemented at defaults: %v", len(g), g.Unimplemented())
	}
	g, err = ParseFeatureGates(" CloneSetPartitionRollback=true ")
	if err != nil || !g.Enabled(CloneSetPartitionRollback) {
		t.Fatalf("CloneSetPartitionRollback=true: %v, %v", g, err)
	}
	// Every OpenKruise gate is accepted; the ones Kruise does not implement are reported.
	g, err = ParseFeatureGates("ImagePullJobGate=true,PodWebhook=false,TemplateNoDefaults=true")
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Unimplemented(); !reflect.DeepEqual(got, []string{"ImagePullJobGate=true", "PodWebhook=false"}) {
		t.Errorf("Unimplemented = %v", got)
	}
	// AllAlpha and AllBeta as Kubernetes reads them: named gates win.
	g, err = ParseFeatureGates("AllAlpha=true,CloneSetShortHash=false")
	if err != nil || !g.Enabled(CloneSetPartitionRollback) || !g.Enabled(TemplateNoDefaults) || g.Enabled(CloneSetShortHash) {
		t.Errorf("AllAlpha=true: %v, %v", g, err)
	}
	g, err = ParseFeatureGates("AllBeta=false")
	if err != nil || g.Enabled("PodWebhook") || g.Enabled(InPlaceUpdateEnvFromMetadata) {
		t.Errorf("AllBeta=false: %v, %v (beta gates off)", g, err)
	}
	for spec, want := range map[string]string{
		"Nope=true":                       `unrecognized feature gate: Nope`,
		"CloneSetPartitionRollback":       "missing bool value for CloneSetPartitionRollback",
		"CloneSetPartitionRollback=maybe": "invalid value of CloneSetPartitionRollback=maybe",
	} {
		if _, err := ParseFeatureGates(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", spec, err, want)
		}
	}
}
