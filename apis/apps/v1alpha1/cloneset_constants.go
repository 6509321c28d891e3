package v1alpha1

// Pod label keys CloneSet sets or reads.
const (
	// CloneSetInstanceIDLabelKey is the pod (and PVC) label holding the instance ID CloneSet gives
	// each pod it creates; PVCs of the same pod carry the same ID so they can be found and reused.
	CloneSetInstanceIDLabelKey = "apps.kruise.io/cloneset-instance-id"

	// SpecifiedDeleteKey is a pod label a user sets (to any value) to ask the owning workload to
	// delete that pod in preference to others, and to replace it when the workload is not scaling in.
	SpecifiedDeleteKey = "apps.kruise.io/specified-delete"
)

// CloneSet annotation keys that tune image pre-download before an update.
const (
	// ImagePreDownloadParallelismKey on a CloneSet caps how many nodes pull the new images at the
	// same time when images are pre-downloaded for an update.
	ImagePreDownloadParallelismKey = "apps.kruise.io/image-predownload-parallelism"

	// ImagePreDownloadTimeoutSecondsKey on a CloneSet sets the timeout, in seconds, of each image
	// pull of the pre-download job.
	ImagePreDownloadTimeoutSecondsKey = "apps.kruise.io/image-predownload-timeout-seconds"

	// ImagePreDownloadMinUpdatedReadyPods on a CloneSet is how many updated pods must be ready
	// before the new images are pre-downloaded onto the nodes of the remaining pods.
	ImagePreDownloadMinUpdatedReadyPods = "apps.kruise.io/image-predownload-min-updated-ready-pods"
)

// CloneSetUpdateStrategyType says how a CloneSet moves its pods to a new revision.
type CloneSetUpdateStrategyType string

// CloneSet update strategy types. An empty type means RecreateCloneSetUpdateStrategyType.
const (
	// RecreateCloneSetUpdateStrategyType deletes each old pod and creates a new one in its place.
	RecreateCloneSetUpdateStrategyType CloneSetUpdateStrategyType = "ReCreate"

	// InPlaceIfPossibleCloneSetUpdateStrategyType updates a pod in place when only fields that can
	// change in place differ (such as container images), and recreates it otherwise.
	InPlaceIfPossibleCloneSetUpdateStrategyType CloneSetUpdateStrategyType = "InPlaceIfPossible"

	// InPlaceOnlyCloneSetUpdateStrategyType only ever updates pods in place; a change that cannot be
	// applied in place is refused.
	InPlaceOnlyCloneSetUpdateStrategyType CloneSetUpdateStrategyType = "InPlaceOnly"
)

// DefaultCloneSetUpdateStrategyType is the update type a CloneSet uses when none is set.
const DefaultCloneSetUpdateStrategyType = RecreateCloneSetUpdateStrategyType

// CloneSetConditionType names a kind of CloneSet status condition.
type CloneSetConditionType string

// CloneSet condition types.
const (
	// CloneSetConditionFailedScale is True while the CloneSet fails to create or delete pods.
	CloneSetConditionFailedScale CloneSetConditionType = "FailedScale"

	// CloneSetConditionFailedUpdate is True while the CloneSet fails to update pods.
	CloneSetConditionFailedUpdate CloneSetConditionType = "FailedUpdate"

	// CloneSetConditionProgressing says whether a rollout makes progress, when
	// spec.progressDeadlineSeconds is set: False with reason ProgressDeadlineExceeded once no
	// progress was seen for that long.
	CloneSetConditionProgressing CloneSetConditionType = "Progressing"
)
