package subset

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// strategicMerge returns a new object: obj with the strategic merge patch applied, with the
// patch strategies of T. An empty patch returns a deep copy through JSON.
func strategicMerge[T any](obj *T, patch []byte) (*T, error) {
	original, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding object for subset patch: %w", err)
	}
	modified := original
	if len(patch) > 0 {
		var schema T
		modified, err = strategicpatch.StrategicMergePatch(original, patch, &schema)
		if err != nil {
			return nil, fmt.Errorf("applying subset patch: %w", err)
		}
	}
	out := new(T)
	if err := json.Unmarshal(modified, out); err != nil {
		return nil, fmt.Errorf("decoding patched object: %w", err)
	}
	return out, nil
}
