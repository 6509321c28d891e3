package holders

import (
	"encoding/json"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// The agents whose holders Kruise manages.
const (
	// Lifecycle holds a pod in a lifecycle hook's state (markPodNotReady).
	Lifecycle = "Lifecycle"
	// ContainerRecreateRequest holds a pod for a request's unreadyGracePeriodSeconds; the key is
	// <namespace>/<name> of the request.
	ContainerRecreateRequest = "ContainerRecreateRequest"
)

// The keys of the Lifecycle holders, one per hook.
const (
	PreDeleteKey = "preDeleteHook"
	PreUpdateKey = "preUpdateHook"
	// PreNormalKey is Kruise's: OpenKruise has no markPodNotReady for preNormal.
	PreNormalKey = "preNormalHook"
)

// Holder is one reason a pod is held not ready.
type Holder struct {
	UserAgent string `json:"userAgent"`
	Key       string `json:"key"`
}

// LifecycleHook returns the holder of the hook that holds a pod in lifecycle state s, and false for
// a state no hook holds in.
func LifecycleHook(s appspub.LifecycleStateType) (Holder, bool) {
	key, ok := map[appspub.LifecycleStateType]string{appspub.LifecycleStatePreparingDelete: PreDeleteKey,
		appspub.LifecycleStatePreparingUpdate: PreUpdateKey, appspub.LifecycleStateUpdating: PreUpdateKey,
		appspub.LifecycleStatePreparingNormal: PreNormalKey}[s]
	return Holder{UserAgent: Lifecycle, Key: key}, ok
}

// ForRequest returns the holder of a ContainerRecreateRequest.
func ForRequest(namespace, name string) Holder {
	return Holder{UserAgent: ContainerRecreateRequest, Key: namespace + "/" + name}
}

// RequestOf returns the namespace and name of a ContainerRecreateRequest holder.
func RequestOf(h Holder) (namespace, name string, ok bool) {
	if h.UserAgent != ContainerRecreateRequest {
		return "", "", false
	}
	return strings.Cut(h.Key, "/")
}

// Of returns the holders listed on pod's KruisePodReady condition, sorted; none when the condition
// is missing or True, or its message is not a holder list.
func Of(pod *corev1.Pod) []Holder {
	for _, c := range pod.Status.Conditions {
		if c.Type != appspub.KruisePodReadyConditionType {
			continue
		}
		if c.Status == corev1.ConditionTrue || c.Message == "" {
			return nil
		}
		var list []Holder
		if json.Unmarshal([]byte(c.Message), &list) != nil {
			return nil
		}
		return sorted(list)
	}
	return nil
}

// Format returns the condition message for a holder list: the sorted list as JSON ("[]" for none).
func Format(list []Holder) string {
	b, _ := json.Marshal(sorted(list))
	return string(b)
}

// With returns list plus h (once); list is not modified.
func With(list []Holder, h Holder) []Holder {
	if slices.Contains(list, h) {
		return sorted(list)
	}
	return sorted(append(slices.Clone(list), h))
}

// Equal reports whether two lists hold the same holders.
func Equal(a, b []Holder) bool { return slices.Equal(sorted(a), sorted(b)) }

// sorted returns a sorted copy of list without duplicates, never nil.
func sorted(list []Holder) []Holder {
	out := slices.Clone(list)
	slices.SortFunc(out, func(a, b Holder) int {
		if c := strings.Compare(a.UserAgent, b.UserAgent); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	out = slices.Compact(out)
	if out == nil {
		out = []Holder{}
	}
	return out
}
