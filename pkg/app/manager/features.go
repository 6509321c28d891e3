package manager

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/component-base/featuregate"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Feature is a named switch for behaviour that can be turned on or off at start.
type Feature string

// gate is one feature gate as OpenKruise v1.9.0 defines it: its default there, whether it is beta
// (AllBeta turns it on) or alpha (AllAlpha), and whether Kruise implements what it switches.
// Kruise's default is OpenKruise's unless kruiseDefaults says otherwise.
type gate struct {
	on, beta, implemented bool
}

// openKruiseGates are the names OpenKruise v1.9.0's --feature-gates accepts (pkg/features of its
// v1.9.0 tag: 34 gates of its own, and the two Kubernetes gates it reads, InPlacePodVerticalScaling
// and DefaultHostNetworkHostPortsInPodTemplates), with OpenKruise's defaults and maturity, so that
// its --feature-gates flag is accepted as it is. A gate Kruise does not implement is accepted and
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
	PodUnavailableBudgetUpdateGate:            {implemented: true},
	InPlacePodVerticalScaling:                 {implemented: true},
	KruiseDaemon:                              {on: true, beta: true, implemented: true},
	ImagePullJobGate:                          {implemented: true},
	ResourcesDeletionProtection:               {on: true, beta: true, implemented: true},
	SidecarTerminator:                         {implemented: true},
	PodProbeMarkerGate:                        {on: true, beta: true, implemented: true},
	ResourceDistributionGate:                  {implemented: true},
	DeletionProtectionForCRDCascadingGate:     {implemented: true},

	PodWebhook:                          {on: true, beta: true},
	WorkloadSpread:                      {on: true, beta: true},
	DaemonWatchingPod:                   {on: true, beta: true},
	"KruisePodReadinessGate":            {},
	"CloneSetEventHandlerOptimization":  {},
	EnhancedLivenessProbe:               {},
	"EnableExternalCerts":               {},
	"StatefulSetAutoResizePVCGate":      {},
	"ForceDeleteTimeoutExpectationGate": {},
	EnablePodProbeMarkerOnServerless:    {},
	"EnableSortSidecarContainerByName":  {},
	"DaemonSetPruneIneligibleNodes":     {},
}

// kruiseDefaults are the gates Kruise defaults differently from OpenKruise v1.9.0, on purpose (the
// reasons are at the gates' constants); --help, the chart's values and docs/openkruise.md say so.
var kruiseDefaults = map[Feature]bool{
	PodUnavailableBudgetUpdateGate: true,
	ResourceDistributionGate:       true,
	SidecarTerminator:              true,
}

// KruiseDefaultsHelp names the gates whose default differs from OpenKruise's, for --help.
func KruiseDefaultsHelp() string {
	var out []string
	for f, on := range kruiseDefaults {
		out = append(out, fmt.Sprintf("%s=%t", f, on))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// cascade turns gates off (or on) that depend on others, after the flag is read, as OpenKruise
// v1.9.0 does at start: without the pod webhook nothing that decides on pods at admission runs;
// without kruise-daemon nothing that needs it on the nodes runs (no image pulls, restarts in place,
// probes or sidecar terminations); image pre-download needs ImagePullJobs; CRD cascading protection
// needs deletion protection.
func cascade(g FeatureGates) {
	off := func(fs ...Feature) {
		for _, f := range fs {
			g[f] = false
		}
	}
	if !g[PodWebhook] {
		off("KruisePodReadinessGate", PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate, WorkloadSpread,
			SidecarSetPatchPodMetadataDefaultsAllowed, EnhancedLivenessProbe, EnablePodProbeMarkerOnServerless)
	}
	if !g[KruiseDaemon] {
		off(PreDownloadImageForInPlaceUpdate, DaemonWatchingPod, InPlaceUpdateEnvFromMetadata, PreDownloadImageForDaemonSetUpdate,
			PodProbeMarkerGate, SidecarTerminator, ImagePullJobGate, EnhancedLivenessProbe)
	}
	if g[PreDownloadImageForInPlaceUpdate] || g[PreDownloadImageForDaemonSetUpdate] {
		g[ImagePullJobGate] = true
	}
	if !g[ResourcesDeletionProtection] {
		off(DeletionProtectionForCRDCascadingGate)
	}
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
	// included. On by default, unlike OpenKruise (alpha, off), on purpose: a rollout never takes a
	// guarded application below its budget (B2 of issue 18).
	PodUnavailableBudgetUpdateGate Feature = "PodUnavailableBudgetUpdateGate"
	// ResourcesDeletionProtection: the label policy.kruise.io/delete-protection (Always, Cascading)
	// protects Namespaces, Services, Ingresses, CRDs and workloads from deletion
	// (pkg/webhook/deletionprotection). Beta, on by default, as in OpenKruise.
	ResourcesDeletionProtection Feature = "ResourcesDeletionProtection"
	// ResourceDistributionGate runs the ResourceDistribution controller. On by default, unlike
	// OpenKruise (alpha, off since v1.5 for the permissions it needs: every namespace's Secrets and
	// ConfigMaps), on purpose: a distribution only ever writes the copies it controls, and refuses
	// a target that holds an object it does not own.
	ResourceDistributionGate Feature = "ResourceDistributionGate"
	// SidecarTerminator ends a job pod whose main containers are done while its sidecars run
	// (pkg/controller/sidecarterminator). On by default, unlike OpenKruise (alpha, off), on purpose:
	// it acts only on containers that opt in through KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT.
	SidecarTerminator Feature = "SidecarTerminator"
	// PodProbeMarkerGate runs PodProbeMarkers: the manager keeps a NodePodProbe per node and marks
	// pods from the probes' states, which kruise-daemon runs (OpenKruise's gate of that name, on by
	// default). Off, a PodProbeMarker is refused at admission.
	PodProbeMarkerGate Feature = "PodProbeMarkerGate"
	// KruiseDaemon says kruise-daemon runs on the nodes (OpenKruise's gate of that name, on by
	// default). Off, as in OpenKruise, nothing that needs it runs: the NodeImage, ImagePullJob,
	// ImageListPullJob, ContainerRecreateRequest and PodProbeMarker controllers, and the gates
	// cascade turns off; those kinds are refused at admission.
	KruiseDaemon Feature = "KruiseDaemon"
	// ImagePullJobGate runs ImagePullJobs and ImageListPullJobs (OpenKruise's gate of that name,
	// alpha, off by default; its chart turns it on, and so does Kruise's, and either pre-download
	// gate turns it on). Off, both kinds are refused at admission.
	ImagePullJobGate Feature = "ImagePullJobGate"
	// InPlacePodVerticalScaling is Kubernetes' gate of that name as OpenKruise reads it (alpha,
	// off): off, a budget whose kruise.io/pub-protect-operations names UPDATE guards resizes too.
	InPlacePodVerticalScaling Feature = "InPlacePodVerticalScaling"
	// PodWebhook, WorkloadSpread, DaemonWatchingPod, EnhancedLivenessProbe and
	// EnablePodProbeMarkerOnServerless are accepted (the first three on by default, as in
	// OpenKruise) and only take part in cascade: Kruise's pod webhook, WorkloadSpreads and
	// kruise-daemon always do what they switch.
	PodWebhook                       Feature = "PodWebhook"
	WorkloadSpread                   Feature = "WorkloadSpread"
	DaemonWatchingPod                Feature = "DaemonWatchingPod"
	EnhancedLivenessProbe            Feature = "EnhancedLivenessProbe"
	EnablePodProbeMarkerOnServerless Feature = "EnablePodProbeMarkerOnServerless"
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
// Kruise does not implement: accepted for compatibility, and changing nothing beyond cascade.
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

// ParseFeatureGates resolves "A=true,B=false" against Kruise's defaults (OpenKruise's, but for
// kruiseDefaults) with Kubernetes' feature-gate rules (k8s.io/component-base/featuregate): AllAlpha
// and AllBeta set every alpha or beta gate not named; then cascade, as OpenKruise. Unknown names
// and non-boolean values are errors.
func ParseFeatureGates(spec string) (FeatureGates, error) {
	fg := featuregate.NewFeatureGate()
	specs := map[featuregate.Feature]featuregate.FeatureSpec{}
	for f, g := range openKruiseGates {
		pre := featuregate.Alpha
		if g.beta {
			pre = featuregate.Beta
		}
		on := g.on
		if k, ok := kruiseDefaults[f]; ok {
			on = k
		}
		specs[featuregate.Feature(f)] = featuregate.FeatureSpec{Default: on, PreRelease: pre}
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
	cascade(out)
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

// gatedOffKinds are the kinds (by the last part of their webhook path) whose controller a gate
// turns off, each with the first gate that is off, in the order OpenKruise's webhooks check them:
// creating one, or changing its spec, is refused as OpenKruise refuses it.
func gatedOffKinds(g FeatureGates) map[string]string {
	needs := map[string][]Feature{
		"resourcedistribution":     {ResourceDistributionGate},
		"podprobemarker":           {PodProbeMarkerGate, KruiseDaemon},
		"nodeimage":                {KruiseDaemon},
		"containerrecreaterequest": {KruiseDaemon},
		"imagepulljob":             {KruiseDaemon, ImagePullJobGate},
		"imagelistpulljob":         {KruiseDaemon, ImagePullJobGate},
	}
	out := map[string]string{}
	for kind, gates := range needs {
		for _, f := range gates {
			if !g[f] {
				out[kind] = string(f)
				break
			}
		}
	}
	return out
}
