// Package defaults holds the defaulting that kruise-manager's mutating
// webhooks apply to apps.kruise.io objects before they are stored.
//
// Every function is pure: it only reads and writes the object it is given.
// Defaulting only fills fields that are unset (a nil pointer, an empty
// string, or a zero int where zero is not a legal value); it never replaces
// a value the user wrote, including explicit zeros held in pointers, so
// applying it twice gives the same result as applying it once.
//
// For kinds served in both v1alpha1 and v1beta1 there is one function per
// version: SetDefaultsX takes the v1alpha1 type and SetDefaultsXV1beta1 the
// v1beta1 (storage) type. Both apply the same defaults to the fields the two
// versions share.
//
// # Sources
//
// Each default is taken from one of:
//   - the field description in OpenKruise v1.9.0's CRDs ("oracle"), e.g.
//     "Default is ReCreate", "Defaults to 20%";
//   - a structural default (the `default:` keyword) in those CRDs, which the
//     API server would also apply; the webhook applies it too so that the
//     object it hands on is already complete;
//   - the OpenKruise user manual at https://openkruise.io/docs/user-manuals/;
//   - the list of known OpenKruise defaults given in the task brief, where
//     neither of the above states the value (marked "brief" in the function
//     comments).
//
// # Pod templates
//
// CloneSet templates are defaulted as OpenKruise v1.9.0's CloneSet webhook
// defaults them (SetDefaultsCloneSetTemplate, applied in addition to
// SetDefaultsCloneSet): every container's empty imagePullPolicy becomes
// Always (containers are updated in place, so a new image must always be
// pulled), then Kubernetes' own pod-spec defaults are applied piecewise
// (SetDefaultsPodTemplate) and the volume claim templates get status.phase
// Pending and rounded quantities (SetDefaultsClaimTemplates). This matters
// because a CloneSet's revision name is a hash of its stored template: with
// the same defaults, a CloneSet created through Kruise gets the revision
// names OpenKruise would give it, and a Kruise manager taking over
// OpenKruise's CloneSets computes the names already in their status (checked
// against objects OpenKruise wrote in test/compat). Kubernetes' defaulting
// lives in k8s.io/kubernetes/pkg/apis/core/v1, which must not enter go.mod
// (k8s.io/api carries no defaulting functions), so the rules are written out
// here, as Kubernetes v1.32 (the version OpenKruise v1.9.0 builds with)
// defines the functions OpenKruise calls.
//
// The other templates (StatefulSet, DaemonSet, BroadcastJob, the templates
// inside UnitedDeployment and AdvancedCronJob) and the corev1.Container
// values embedded in SidecarSet containers are still left alone. Pods
// created from these templates are defaulted by the API server when they
// are created.
//
// Templates of child workloads (UnitedDeployment subset templates,
// AdvancedCronJob broadcastJob/imageListPullJob templates) are also left
// alone: the child object they produce is defaulted by its own webhook when
// the controller creates it.
//
// # Unknown defaults, left unset
//
// These fields have no default that could be established from the oracle
// CRD descriptions or the OpenKruise documentation, so they are not touched:
//   - CloneSet: spec.scaleStrategy.maxUnavailable, spec.progressDeadlineSeconds.
//   - Advanced StatefulSet: spec.scaleStrategy.maxUnavailable,
//     spec.volumeClaimUpdateStrategy.type, rollingUpdate.minReadySeconds;
//     spec.persistentVolumeClaimRetentionPolicy is not created when absent
//     (only its empty whenDeleted/whenScaled are filled with the documented
//     "Retain" when the user gives the struct).
//   - Advanced DaemonSet: rollingUpdate.paused, v1beta1 spec.scaleStrategy.
//   - BroadcastJob: spec.parallelism (documented as "no limit" when unset,
//     so nil is kept); completionPolicy.activeDeadlineSeconds and
//     ttlSecondsAfterFinished; failurePolicy.restartLimit; the pod
//     template's restartPolicy (the docs only say Never/OnFailure are
//     allowed; an OpenKruise pull request, openkruise/kruise#1149, mentions
//     defaulting it to OnFailure, but neither the oracle nor the user manual
//     states it).
//   - ImagePullJob / ImageListPullJob: completionPolicy.activeDeadlineSeconds
//     and ttlSecondsAfterFinished.
//   - NodeImage: tags[].pullPolicy.ttlSecondsAfterFinished and
//     activeDeadlineSeconds.
//   - SidecarSet: updateStrategy.paused / selector / scatterStrategy,
//     containers[].shareVolumeDevicePolicy, spec.namespaceSelector (its
//     documented default, the empty selector, is a matching rule, not a
//     stored value), injectionStrategy.revision is not created when absent.
//   - ContainerRecreateRequest: spec.activeDeadlineSeconds,
//     spec.ttlSecondsAfterFinished (the user manual shows 300 and 1800 only as
//     example values and calls them optional), strategy.terminationGracePeriodSeconds
//     (nil means "use the pod's"), strategy.unreadyGracePeriodSeconds.
//   - AdvancedCronJob: spec.timeZone (nil means "the time zone of the
//     kruise-controller-manager process"), spec.startingDeadlineSeconds.
//   - EphemeralJob: spec.replicas (nil means "replicas will not work"),
//     spec.parallelism, spec.activeDeadlineSeconds.
//   - WorkloadSpread and PersistentPodState: nothing at all (OpenKruise
//     v1.9.0 has no defaulting webhook for them; the documented defaults,
//     scheduleStrategy.type Fixed and persistentPodStateRetentionPolicy
//     WhenScaled, are how an unset value is read, not stored values).
//   - UnitedDeployment: topology.scheduleStrategy.type and the adaptive
//     strategy's rescheduleCriticalSeconds / unschedulableDuration (read as
//     Fixed, 30 and 300 when unset, as OpenKruise reads them, but not
//     written, as OpenKruise does not write them); topology.subsets[].
//     minReplicas / maxReplicas (their "Defaults to 0" / "Defaults to nil"
//     describe how unset is read).
//   - PodProbeMarker / NodePodProbe: probe.initialDelaySeconds,
//     terminationGracePeriodSeconds, httpGet.path.
//   - ResourceDistribution and PodUnavailableBudget (apis/policy/defaults):
//     no documented defaults at all; their functions are no-ops kept so that
//     every webhook has a defaulting entry point.
package defaults
