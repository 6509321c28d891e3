package resourcedistribution

import "k8s.io/apimachinery/pkg/api/equality"

// equalJSON compares two objects' top-level fields, an empty map or a null counting as absent
// (the API server does not keep them).
func equalJSON(a, b map[string]any) bool {
	return equality.Semantic.DeepEqual(dropEmpty(a), dropEmpty(b))
}

func dropEmpty(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if mv, ok := v.(map[string]any); ok && len(mv) == 0 {
			continue
		}
		if v == nil {
			continue
		}
		out[k] = v
	}
	return out
}
