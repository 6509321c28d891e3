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
		t.Errorf("%d gates (want OpenKruise v1.9.0's 34 and the 2 Kubernetes gates it reads), unimplemented at defaults: %v", len(g), g.Unimplemented())
	}
	g, err = ParseFeatureGates(" CloneSetPartitionRollback=true ")
	if err != nil || !g.Enabled(CloneSetPartitionRollback) {
		t.Fatalf("CloneSetPartitionRollback=true: %v, %v", g, err)
	}
	// Every OpenKruise gate is accepted; the ones Kruise does not implement are reported (PodWebhook
	// off turns WorkloadSpread off, as in OpenKruise).
	g, err = ParseFeatureGates("EnableExternalCerts=true,PodWebhook=false,TemplateNoDefaults=true")
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Unimplemented(); !reflect.DeepEqual(got, []string{"EnableExternalCerts=true", "PodWebhook=false", "WorkloadSpread=false"}) {
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

// TestEveryGateDefault lists every gate --feature-gates accepts with its default in OpenKruise
// v1.9.0 (pkg/features of its v1.9.0 tag; the last two are Kubernetes' gates it reads) next to
// Kruise's: they differ only where Kruise differs on purpose (kruiseDefaults, said in --help).
func TestEveryGateDefault(t *testing.T) {
	openKruise := map[Feature]bool{
		"PodWebhook": true, "KruiseDaemon": true, "DaemonWatchingPod": true,
		"CloneSetShortHash": false, "KruisePodReadinessGate": false, "PreDownloadImageForInPlaceUpdate": false,
		"CloneSetPartitionRollback": false, "ResourcesDeletionProtection": true, "WorkloadSpread": true,
		"PodUnavailableBudgetDeleteGate": true, "PodUnavailableBudgetUpdateGate": false, "TemplateNoDefaults": false,
		"InPlaceUpdateEnvFromMetadata": true, "StatefulSetAutoDeletePVC": true, "SidecarSetPatchPodMetadataDefaultsAllowed": false,
		"SidecarTerminator": false, "PodProbeMarkerGate": true, "PreDownloadImageForDaemonSetUpdate": false,
		"CloneSetEventHandlerOptimization": false, "PreparingUpdateAsUpdate": false, "ImagePullJobGate": false,
		"ResourceDistributionGate": false, "DeletionProtectionForCRDCascadingGate": false, "EnhancedLivenessProbe": false,
		"RecreatePodWhenChangeVCTInCloneSetGate": false, "StatefulSetStartOrdinal": false, "PodIndexLabel": true,
		"EnableExternalCerts": false, "StatefulSetAutoResizePVCGate": false, "ForceDeleteTimeoutExpectationGate": false,
		"InPlaceWorkloadVerticalScaling": false, "EnablePodProbeMarkerOnServerless": false,
		"EnableSortSidecarContainerByName": false, "DaemonSetPruneIneligibleNodes": false,
		"InPlacePodVerticalScaling": false, "DefaultHostNetworkHostPortsInPodTemplates": false,
	}
	differs := map[Feature]bool{"PodUnavailableBudgetUpdateGate": true, "ResourceDistributionGate": true, "SidecarTerminator": true}
	g, err := ParseFeatureGates("")
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(openKruise) {
		t.Errorf("%d gates accepted, %d listed here", len(g), len(openKruise))
	}
	t.Logf("%-42s %-10s %s", "gate", "OpenKruise", "Kruise")
	for f, want := range openKruise {
		spec, ok := openKruiseGates[f]
		if !ok {
			t.Errorf("%s: not accepted", f)
			continue
		}
		if spec.on != want {
			t.Errorf("%s: recorded as %t in OpenKruise, want %t", f, spec.on, want)
		}
		t.Logf("%-42s %-10t %t", f, want, g[f])
		if (g[f] != want) != differs[f] {
			t.Errorf("%s: Kruise %t, OpenKruise %t; a difference must be deliberate and said (kruiseDefaults)", f, g[f], want)
		}
	}
	help := KruiseDefaultsHelp()
	for f := range differs {
		if !strings.Contains(help, string(f)+"=") {
			t.Errorf("--help (%q) does not name %s", help, f)
		}
	}
}

// TestGatesCascade: as OpenKruise at start, gates that need another are off without it, and
// image pre-download turns ImagePullJobs on.
func TestGatesCascade(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		on, off []Feature
	}{
		{"", []Feature{KruiseDaemon, PodProbeMarkerGate, InPlaceUpdateEnvFromMetadata, WorkloadSpread}, []Feature{ImagePullJobGate}},
		{"KruiseDaemon=false,PreDownloadImageForInPlaceUpdate=true,SidecarTerminator=true", nil,
			[]Feature{PreDownloadImageForInPlaceUpdate, DaemonWatchingPod, InPlaceUpdateEnvFromMetadata, PreDownloadImageForDaemonSetUpdate,
				PodProbeMarkerGate, SidecarTerminator, ImagePullJobGate, EnhancedLivenessProbe}},
		{"PreDownloadImageForDaemonSetUpdate=true", []Feature{ImagePullJobGate}, nil},
		{"PodWebhook=false", nil, []Feature{"KruisePodReadinessGate", PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate,
			WorkloadSpread, SidecarSetPatchPodMetadataDefaultsAllowed, EnablePodProbeMarkerOnServerless}},
		{"ResourcesDeletionProtection=false,DeletionProtectionForCRDCascadingGate=true", nil, []Feature{DeletionProtectionForCRDCascadingGate}},
	} {
		g, err := ParseFeatureGates(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range tc.on {
			if !g[f] {
				t.Errorf("%q: %s off, want on", tc.spec, f)
			}
		}
		for _, f := range tc.off {
			if g[f] {
				t.Errorf("%q: %s on, want off", tc.spec, f)
			}
		}
	}
}

// TestGatedOffKinds: each kind a gate turns off names the first gate that is off, in OpenKruise's
// order; at the defaults only ImagePullJobs and ImageListPullJobs are (ImagePullJobGate is off, as
// in OpenKruise).
func TestGatedOffKinds(t *testing.T) {
	for spec, want := range map[string]map[string]string{
		"": {"imagepulljob": "ImagePullJobGate", "imagelistpulljob": "ImagePullJobGate"},
		"ImagePullJobGate=true,ResourceDistributionGate=false": {"resourcedistribution": "ResourceDistributionGate"},
		"KruiseDaemon=false": {"podprobemarker": "PodProbeMarkerGate", "nodeimage": "KruiseDaemon", "containerrecreaterequest": "KruiseDaemon",
			"imagepulljob": "KruiseDaemon", "imagelistpulljob": "KruiseDaemon"},
	} {
		g, err := ParseFeatureGates(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := gatedOffKinds(g); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %v, want %v", spec, got, want)
		}
	}
}
