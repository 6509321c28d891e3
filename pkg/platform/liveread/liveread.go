package liveread

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ByName reads the object namespace/name (namespace "" for a cluster-scoped kind) of list's kind
// through r, by a list restricted to that name; found is false when there is none.
func ByName[T client.Object](ctx context.Context, r client.Reader, list client.ObjectList, namespace, name string) (obj T, found bool, err error) {
	opts := []client.ListOption{client.MatchingFields{"metadata.name": name}}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := r.List(ctx, list, opts...); err != nil {
		return obj, false, err
	}
	items, err := apimeta.ExtractList(list)
	if err != nil || len(items) == 0 {
		return obj, false, err
	}
	o, ok := items[0].(T)
	if !ok {
		return obj, false, fmt.Errorf("listed a %T, not a %T", items[0], obj)
	}
	return o, true, nil
}
