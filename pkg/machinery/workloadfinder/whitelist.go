package workloadfinder

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The whitelists of custom workloads, entries of the kruise-configuration ConfigMap in the
// manager's namespace (OpenKruise's keys and format: {"workloads":[{"Group":…,"Kind":…},…]}).
const (
	// ConfigurationName is the ConfigMap that holds the whitelists.
	ConfigurationName = "kruise-configuration"
	// WorkloadSpreadWhitelist lists the custom workloads a WorkloadSpread may target.
	WorkloadSpreadWhitelist = "WorkloadSpread_Watch_Custom_Workload_WhiteList"
	// PersistentPodStateWhitelist lists the custom workloads a PersistentPodState may target.
	PersistentPodStateWhitelist = "PPS_Watch_Custom_Workload_WhiteList"
)

// CustomWorkloads reads the group and kind of each custom workload listed in the whitelist entry
// key of the ConfigurationName ConfigMap in namespace, through r. A nil reader, a missing
// ConfigMap or a missing entry list none; an entry that is not the whitelist's JSON is an error.
func CustomWorkloads(ctx context.Context, r client.Reader, namespace, key string) ([]schema.GroupKind, error) {
	if r == nil {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ConfigurationName}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("cannot read ConfigMap %s/%s: %w", namespace, ConfigurationName, err)
	}
	raw, ok := cm.Data[key]
	if !ok {
		return nil, nil
	}
	var list struct {
		Workloads []struct{ Group, Kind string } `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s, entry %s: %w", namespace, ConfigurationName, key, err)
	}
	out := make([]schema.GroupKind, 0, len(list.Workloads))
	for _, w := range list.Workloads {
		out = append(out, schema.GroupKind{Group: w.Group, Kind: w.Kind})
	}
	return out, nil
}
