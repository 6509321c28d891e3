package manager

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/featuregate"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Feature is a named switch for behaviour that can be turned on or off at start.
type Feature string

// gate is one feature gate of OpenKruise v1.9.0: its default there, whether it is beta (AllBeta
// turns it on) or alpha (AllAlpha), and whether Kruise implements what it switches.
type gate struct {
	on, beta, implemented bool
}

// openKruiseGates are all of OpenKruise v1.9.0's feature gates (pkg/features of its v1.9.0 tag), with
// OpenKruise's defaults and maturity, so that its
// --feature-gates flag is accepted as it is. A gate Kruise does not implement is accepted and
// reported (log and the kruise_manager_feature_gate metric), never an error; a gate is marked
// implemented together with the code that consults it.
var openKruiseGates = map[Feature]gate{
	CloneSetPartitionRollback:                 {implemented: true},
	InPlaceWorkloadVerticalScaling:            {implemented: true},
	PreDownloadImageForInPlaceUpdate:          {implemented: true},
	PreDownloadImageForDaemonSetUpdate:        {implemented: true},
	InPlaceUpdateEnvFromMetadata:              {on: true, beta: true, implemented: true},
	CloneSetShortHash:                         {implemented: true},
	RecreatePodWhenChangeVCTInCloneSetGate:    {implemented: true},
	TemplateNoDefaults:                        {implemented: true},
	PreparingUpdateAsUpdate:                   {implemented: true},
	DefaultHostNetworkHostPortsInPodTemplates: {implemented: true},
	StatefulSetAutoDeletePVC:                  {on: true, beta: true, implemented: true},
	StatefulSetStartOrdinal:                   {implemented: true},
	PodIndexLabel:                             {on: true, beta: true, implemented: true},
	SidecarSetPatchPodMetadataDefaultsAllowed: {implemented: true},
	PodUnavailableBudgetDeleteGate:            {on: true, beta: true, implemented: true},
	// On in Kruise, off in OpenKruise: budgets guard in-place updates by default (B2 of issue 18).
	PodUnavailableBudgetUpdateGate: {on: true, implemented: true},

	"PodWebhook":                            {on: true, beta: true},
	KruiseDaemon:                            {on: true, beta: true, implemented: true},
	"DaemonWatchingPod":                     {on: true, beta: true},
	"KruisePodReadinessGate":                {},
	"ResourcesDeletionProtection":           {on: true, beta: true, implemented: true}, // on by default: differs from OpenKruise on purpose (ResourcesDeletionProtection below)
	"WorkloadSpread":                        {on: true, beta: true},
	SidecarTerminator:                       {on: true, implemented: true}, // on by default: differs from OpenKruise on purpose (SidecarTerminator below)
	PodProbeMarkerGate:                      {on: true, beta: true, implemented: true},
	"CloneSetEventHandlerOptimization":      {},
	"ImagePullJobGate":                      {},
	ResourceDistributionGate:                {on: true, beta: true, implemented: true}, // on by default: differs from OpenKruise on purpose (ResourceDistributionGate below)
	"DeletionProtectionForCRDCascadingGate": {implemented: true},
	"EnhancedLivenessProbe":                 {},
	"EnableExternalCerts":                   {},
	"StatefulSetAutoResizePVCGate":          {},
	"ForceDeleteTimeoutExpectationGate":     {},
	"EnablePodProbeMarkerOnServerless":      {},
	"EnableSortSidecarContainerByName":      {},
	"InPlacePodVerticalScaling":             {},
	"DaemonSetPruneIneligibleNodes":         {},
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
	// PreDownloadImageForInPlaceUpdate: a CloneSet or Advanced StatefulSet update that changes images first has
	// ImagePullJobs pull them onto the nodes of its pods (OpenKruise's gate of that name, off by
	// default; the sandbox turns it on when it runs kruise-daemon).
	PreDownloadImageForInPlaceUpdate Feature = "PreDownloadImageForInPlaceUpdate"
	// PreDownloadImageForDaemonSetUpdate: an Advanced DaemonSet's InPlaceIfPossible update that
	// changes images first has ImagePullJobs pull them onto the nodes of its pods (OpenKruise's
	// gate of that name, off by default; the sandbox turns it on when it runs kruise-daemon).
	PreDownloadImageForDaemonSetUpdate Feature = "PreDownloadImageForDaemonSetUpdate"
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
	// TemplateNoDefaults: the CloneSet and Advanced StatefulSet webhooks leave pod templates and claim templates as given
	// (OpenKruise's gate of that name, off by default: templates are defaulted as OpenKruise
	// defaults them, so revision names match OpenKruise's and `kubectl replace` of an unchanged
	// template rolls nothing).
	TemplateNoDefaults Feature = "TemplateNoDefaults"
	// PreparingUpdateAsUpdate: when a CloneSet scales, a pod held in PreparingUpdate by an
	// inPlaceUpdate hook counts as updated (OpenKruise's gate of that name, off by default).
	PreparingUpdateAsUpdate Feature = "PreparingUpdateAsUpdate"
	// DefaultHostNetworkHostPortsInPodTemplates: the CloneSet and Advanced StatefulSet webhooks default each container port's
	// hostPort to its containerPort in a hostNetwork pod template, as Kubernetes did before 1.28
	// (OpenKruise's gate of that name, off by default).
	DefaultHostNetworkHostPortsInPodTemplates Feature = "DefaultHostNetworkHostPortsInPodTemplates"
	// StatefulSetAutoDeletePVC: an Advanced StatefulSet honours persistentVolumeClaimRetentionPolicy
	// (OpenKruise's gate of that name, on by default).
	StatefulSetAutoDeletePVC Feature = "StatefulSetAutoDeletePVC"
	// StatefulSetStartOrdinal: an Advanced StatefulSet numbers its pods from ordinals.start
	// (OpenKruise's gate of that name, off by default: ordinals start at 0).
	StatefulSetStartOrdinal Feature = "StatefulSetStartOrdinal"
	// PodIndexLabel: Advanced StatefulSet pods carry their ordinal in the label
	// apps.kubernetes.io/pod-index (OpenKruise's gate of that name, on by default).
	PodIndexLabel Feature = "PodIndexLabel"
	// SidecarSetPatchPodMetadataDefaultsAllowed lets a SidecarSet's patchPodMetadata set any pod
	// annotation when ConfigMap kruise-configuration holds no whitelist.
	SidecarSetPatchPodMetadataDefaultsAllowed Feature = "SidecarSetPatchPodMetadataDefaultsAllowed"
	// PodUnavailableBudgetDeleteGate: budgets guard pod deletions and evictions.
	PodUnavailableBudgetDeleteGate Feature = "PodUnavailableBudgetDeleteGate"
	// PodUnavailableBudgetUpdateGate: budgets guard in-place updates and resizes, Kruise's own
	// included (on by default in Kruise; off in OpenKruise).
	PodUnavailableBudgetUpdateGate Feature = "PodUnavailableBudgetUpdateGate"
	// ResourcesDeletionProtection: the label policy.kruise.io/delete-protection (Always, Cascading)
	// protects Namespaces, Services, Ingresses, CRDs and workloads from deletion
	// (pkg/webhook/deletionprotection). On by default, unlike OpenKruise (beta, off), on purpose:
	// the label is opt-in per object, and the webhook is called for labelled objects only.
	ResourcesDeletionProtection Feature = "ResourcesDeletionProtection"
	// ResourceDistributionGate runs the ResourceDistribution controller. On by default, unlike
	// OpenKruise (beta, off since v1.5 for the permissions it needs: every namespace's Secrets and
	// ConfigMaps), on purpose: a distribution only ever writes the copies it controls, and refuses
	// a target that holds an object it does not own.
	ResourceDistributionGate Feature = "ResourceDistributionGate"
	// SidecarTerminator ends a job pod whose main containers are done while its sidecars run
	// (pkg/controller/sidecarterminator). On by default, unlike OpenKruise (off), on purpose: it acts
	// only on containers that opt in through KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT.
	SidecarTerminator Feature = "SidecarTerminator"
	// PodProbeMarkerGate runs PodProbeMarkers: the manager keeps a NodePodProbe per node and marks
	// pods from the probes' states, which kruise-daemon runs (OpenKruise's gate of that name, on by
	// default; off also when KruiseDaemon is off, as in OpenKruise).
	PodProbeMarkerGate Feature = "PodProbeMarkerGate"
	// KruiseDaemon says kruise-daemon runs on the nodes (OpenKruise's gate of that name, on by
	// default); off, nothing that needs it runs (PodProbeMarkerGate).
	KruiseDaemon Feature = "KruiseDaemon"
	// DeletionProtectionForCRDCascadingGate: a CRD labelled Cascading is refused deletion while it
	// has custom resources; without the gate it is refused deletion outright (OpenKruise's gate of
	// that name, off by default).
	DeletionProtectionForCRDCascadingGate Feature = "DeletionProtectionForCRDCascadingGate"
)

// FeatureGates are the resolved gates.
type FeatureGates map[Feature]bool

// Enabled reports whether f is on.
func (g FeatureGates) Enabled(f Feature) bool { return g[f] }

// Unimplemented lists, sorted, the gates set to something other than OpenKruise's default that
// Kruise does not implement: accepted for compatibility, and changing nothing.
func (g FeatureGates) Unimplemented() []string {
	var out []string
	for f, spec := range openKruiseGates {
		if !spec.implemented && g[f] != spec.on {
			out = append(out, fmt.Sprintf("%s=%t", f, g[f]))
		}
	}
	sort.Strings(out)
	return out
}

// Implemented reports whether Kruise implements gate f.
func Implemented(f Feature) bool { return openKruiseGates[f].implemented }

// ParseFeatureGates resolves "A=true,B=false" against OpenKruise's defaults with Kubernetes'
// feature-gate rules (k8s.io/component-base/featuregate): AllAlpha and AllBeta set every alpha or
// beta gate not named. Unknown names and non-boolean values are errors.
func ParseFeatureGates(spec string) (FeatureGates, error) {
	fg := featuregate.NewFeatureGate()
	specs := map[featuregate.Feature]featuregate.FeatureSpec{}
	for f, g := range openKruiseGates {
		pre := featuregate.Alpha
		if g.beta {
			pre = featuregate.Beta
		}
		specs[featuregate.Feature(f)] = featuregate.FeatureSpec{Default: g.on, PreRelease: pre}
	}
	if err := fg.Add(specs); err != nil {
		return nil, err
	}
	if err := fg.Set(spec); err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	out := FeatureGates{}
	for f := range openKruiseGates {
		out[f] = fg.Enabled(featuregate.Feature(f))
	}
	return out, nil
}

// featureGateMetric reports every gate: 1 when on, 0 when off, labelled with whether Kruise
// implements it.
var featureGateMetric = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "kruise_manager_feature_gate",
	Help: "Feature gates of kruise-manager: 1 when on. implemented=false: accepted for compatibility with OpenKruise, changes nothing.",
}, []string{"name", "implemented"})

// reportFeatureGates publishes g on the metric and logs the gates set away from OpenKruise's
// default that Kruise does not implement.
func reportFeatureGates(log logr.Logger, g FeatureGates) {
	for f, on := range g {
		v := 0.0
		if on {
			v = 1
		}
		featureGateMetric.WithLabelValues(string(f), strconv.FormatBool(Implemented(f))).Set(v)
	}
	if u := g.Unimplemented(); len(u) > 0 {
		log.Info("feature gates accepted for compatibility with OpenKruise but not implemented by Kruise: they change nothing", "gates", u)
	}
}

func init() { ctrlmetrics.Registry.MustRegister(featureGateMetric) }
