package sidecarrules

import (
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
)

// Annotation, label and env keys OpenKruise v1.9.0 uses for SidecarSet injection. The values are
// part of the wire contract: pods and SidecarSets written by either manager carry them.
const (
	// HashAnnotation is, on a SidecarSet, the hash of its sidecar containers (Hash); on a pod, a
	// JSON map from SidecarSet name to the UpgradeSpec of the sidecars it carries.
	HashAnnotation = "kruise.io/sidecarset-hash"
	// HashWithoutImageAnnotation is HashAnnotation with the images left out (HashWithoutImage):
	// while it is unchanged, a sidecar can be upgraded in place.
	HashWithoutImageAnnotation = "kruise.io/sidecarset-hash-without-image"
	// InjectedListAnnotation is, on a pod, the sorted comma-separated names of the SidecarSets
	// injected into it.
	InjectedListAnnotation = "kruise.io/sidecarset-injected-list"
	// InplaceUpdateStateAnnotation is, on a pod, a JSON map from SidecarSet name to the state of
	// its last in-place sidecar upgrade (apps.kruise.io InPlaceUpdateState: the hash upgraded to,
	// when, and the image IDs the changed containers reported before).
	InplaceUpdateStateAnnotation = "kruise.io/sidecarset-inplace-update-state"
	// InjectedEnv is set to "true" in every container a SidecarSet injects; containers carrying it
	// are never treated as the pod's own (app) containers.
	InjectedEnv = "IS_INJECTED"

	// WorkingHotUpgradeContainerAnnotation is, on a pod, a JSON map from a hot-upgrade sidecar's
	// name to the name of the copy (<name>-1 or <name>-2) that is working.
	WorkingHotUpgradeContainerAnnotation = "kruise.io/sidecarset-working-hotupgrade-container"
	// VersionEnv and VersionAltEnv let a hot-upgrade copy read its own and its twin's version from
	// the pod annotations VersionAnnotationPrefix+name and VersionAltAnnotationPrefix+name.
	VersionEnv    = "SIDECARSET_VERSION"
	VersionAltEnv = "SIDECARSET_VERSION_ALT"
	// VersionAnnotationPrefix and VersionAltAnnotationPrefix prefix the container name in the
	// per-copy version annotations of hot-upgrade sidecars.
	VersionAnnotationPrefix    = "version.sidecarset.kruise.io/"
	VersionAltAnnotationPrefix = "versionalt.sidecarset.kruise.io/"

	// RevisionOwnerLabel is, on a SidecarSet's ControllerRevision, the SidecarSet's name.
	RevisionOwnerLabel = "kruise.io/sidecarset-name"
	// CustomVersionLabel is, on a SidecarSet's ControllerRevision, the SidecarSet's custom version,
	// which injectionStrategy.revision.customVersion selects.
	CustomVersionLabel = v1beta1.SidecarSetCustomVersionLabel
)

// defaultNamespace is the namespace of a pod that names none (OpenKruise matches it as such).
const defaultNamespace = "default"

// Kruise's own keys (not in OpenKruise), written by the injection registrar on a SidecarSet.
const (
	// RegisteredAnnotation is the generation whose injection webhook entry the API server has
	// (or, when that generation injects no pod, whose absence of an entry it has): from the
	// moment it shows a generation, every pod created that this generation selects gets its
	// sidecars or is refused.
	RegisteredAnnotation = "apps.kruise.io/injection-registered-generation"
	// NotRegisteredAnnotation says why the SidecarSet's current generation has no entry (its
	// injection is paused, it selects no pod, the entries cannot be written); absent otherwise.
	NotRegisteredAnnotation = "apps.kruise.io/injection-not-registered"
)

// Marks are RegisteredAnnotation and NotRegisteredAnnotation, as the registrar writes them.
var Marks = registrationmark.Keys{Registered: RegisteredAnnotation, NotRegistered: NotRegisteredAnnotation}
