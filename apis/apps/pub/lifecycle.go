package pub

// LifecycleStateType is a pod's position in the Kruise lifecycle, kept in the pod label
// LifecycleStateKey by the workload controller.
type LifecycleStateType string

// Lifecycle states. A pod moves PreparingNormal → Normal, then for an in-place update
// PreparingUpdate → Updating → Updated → Normal, and PreparingDelete before it is deleted.
const (
	// LifecycleStatePreparingNormal: created; waiting for the preNormal hook to let it serve.
	LifecycleStatePreparingNormal LifecycleStateType = "PreparingNormal"
	// LifecycleStateNormal: serving; no lifecycle action in progress.
	LifecycleStateNormal LifecycleStateType = "Normal"
	// LifecycleStatePreparingUpdate: chosen for an in-place update; held while the inPlaceUpdate hook's
	// labels or finalizers say the user is not done preparing.
	LifecycleStatePreparingUpdate LifecycleStateType = "PreparingUpdate"
	// LifecycleStateUpdating: the in-place update is being applied.
	LifecycleStateUpdating LifecycleStateType = "Updating"
	// LifecycleStateUpdated: the in-place update finished; waiting for the hook to release the pod.
	LifecycleStateUpdated LifecycleStateType = "Updated"
	// LifecycleStatePreparingDelete: chosen for deletion; held while the preDelete hook holds it.
	LifecycleStatePreparingDelete LifecycleStateType = "PreparingDelete"
)

// Pod label keys of the lifecycle protocol.
const (
	// LifecycleStateKey is the pod label holding the pod's LifecycleStateType.
	LifecycleStateKey = "lifecycle.apps.kruise.io/state"
	// LifecycleTimestampKey is the pod annotation holding when the state last changed (RFC 3339).
	LifecycleTimestampKey = "lifecycle.apps.kruise.io/timestamp"
)

// Lifecycle lists the hooks that can hold a pod in a lifecycle state until the user's own
// controller releases it.
type Lifecycle struct {
	// PreDelete holds a pod in PreparingDelete before the workload deletes it.
	// +optional
	PreDelete *LifecycleHook `json:"preDelete,omitempty"`
	// InPlaceUpdate holds a pod in PreparingUpdate before, and in Updated after, an in-place update.
	// +optional
	InPlaceUpdate *LifecycleHook `json:"inPlaceUpdate,omitempty"`
	// PreNormal holds a new pod in PreparingNormal before it counts as Normal.
	// +optional
	PreNormal *LifecycleHook `json:"preNormal,omitempty"`
}

// LifecycleHook says what holds a pod in a hook's state. For preDelete and inPlaceUpdate the pod is
// held while any of these labels or finalizers is still on it (the user's controller removes them to
// release it); for preNormal it is held until all of them are on it.
type LifecycleHook struct {
	// LabelsHandler are pod labels the user's controller manages to hold or release the pod.
	// +optional
	LabelsHandler map[string]string `json:"labelsHandler,omitempty"`
	// FinalizersHandler are pod finalizers the user's controller manages to hold or release the pod.
	// +optional
	FinalizersHandler []string `json:"finalizersHandler,omitempty"`
	// MarkPodNotReady turns the pod NotReady (through the KruisePodReady condition) while it is in
	// the hook's state, so that it leaves Service endpoints first.
	// +optional
	MarkPodNotReady bool `json:"markPodNotReady,omitempty"`
}
