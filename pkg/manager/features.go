package manager

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Feature is a named switch for behaviour that can be turned on or off at start.
type Feature string

// featureDefaults lists the feature gates this build implements, with their defaults. Names are
// OpenKruise's where the feature exists there. A gate is added here together with the code that
// consults it: a gate that changes nothing would be a silent lie.
var featureDefaults = map[Feature]bool{
	CloneSetPartitionRollback:              false,
	InPlaceWorkloadVerticalScaling:         false,
	PreDownloadImageForInPlaceUpdate:       false,
	InPlaceUpdateEnvFromMetadata:           false,
	CloneSetShortHash:                      false,
	RecreatePodWhenChangeVCTInCloneSetGate: false,
}

// The feature gates.
const (
	// CloneSetPartitionRollback: raising a CloneSet's partition during a rollout moves pods back to
	// the current revision (OpenKruise's gate of that name, alpha, off by default).
	CloneSetPartitionRollback Feature = "CloneSetPartitionRollback"
	// InPlaceWorkloadVerticalScaling: a change of containers' CPU or memory is applied in place
	// through the pods/resize subresource (found by API discovery) instead of recreating pods
	// (OpenKruise's gate of that name, off by default).
	InPlaceWorkloadVerticalScaling Feature = "InPlaceWorkloadVerticalScaling"
	// PreDownloadImageForInPlaceUpdate: a CloneSet update that changes images first has
	// ImagePullJobs pull them onto the nodes of its pods (OpenKruise's gate of that name, off by
	// default; the sandbox turns it on when it runs kruise-daemon).
	PreDownloadImageForInPlaceUpdate Feature = "PreDownloadImageForInPlaceUpdate"
	// InPlaceUpdateEnvFromMetadata: a label or annotation change read by a container's env (downward
	// API) restarts that container in place, through a ContainerRecreateRequest carried out by
	// kruise-daemon, instead of recreating the pod (OpenKruise's gate of that name; off by default
	// here since it needs kruise-daemon on every node; the sandbox turns it on when it runs one).
	InPlaceUpdateEnvFromMetadata Feature = "InPlaceUpdateEnvFromMetadata"
	// CloneSetShortHash: CloneSet pods carry the revision's hash instead of its name in
	// controller-revision-hash, for pod label values limited to 63 characters (OpenKruise's gate of
	// that name, off by default). Pods of either form are read as their revision whatever the gate.
	CloneSetShortHash Feature = "CloneSetShortHash"
	// RecreatePodWhenChangeVCTInCloneSetGate: a CloneSet template change made together with a
	// volumeClaimTemplates change recreates pods (new claims) instead of updating them in place
	// (OpenKruise's gate of that name, off by default: claim templates apply to new pods only).
	RecreatePodWhenChangeVCTInCloneSetGate Feature = "RecreatePodWhenChangeVCTInCloneSetGate"
)

// FeatureGates are the resolved gates.
type FeatureGates map[Feature]bool

// Enabled reports whether f is on.
func (g FeatureGates) Enabled(f Feature) bool { return g[f] }

// ParseFeatureGates resolves "A=true,B=false" against the defaults. Unknown names and non-boolean
// values are errors naming the gates this build knows.
func ParseFeatureGates(spec string) (FeatureGates, error) {
	gates := FeatureGates{}
	for f, on := range featureDefaults {
		gates[f] = on
	}
	for _, kv := range strings.Split(spec, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--feature-gates: %q is not Name=true|false", kv)
		}
		f := Feature(strings.TrimSpace(name))
		if _, known := featureDefaults[f]; !known {
			return nil, fmt.Errorf("--feature-gates: unknown feature gate %q (this build implements: %s)", f, knownFeatures())
		}
		on, err := strconv.ParseBool(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("--feature-gates: %s=%q is not a boolean", f, val)
		}
		gates[f] = on
	}
	return gates, nil
}

func knownFeatures() string {
	if len(featureDefaults) == 0 {
		return "none yet"
	}
	names := make([]string, 0, len(featureDefaults))
	for f := range featureDefaults {
		names = append(names, string(f))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
