package workloadfinder

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestCustomWorkloads(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kruise-system", Name: ConfigurationName}, Data: map[string]string{
		WorkloadSpreadWhitelist:     `{"workloads":[{"Group":"game.kruise.io","Version":"v1","Kind":"GameServerSet","replicasPath":"spec.replicas"}]}`,
		PersistentPodStateWhitelist: `not json`}}
	r := fake.NewClientBuilder().WithObjects(cm).Build()
	got, err := CustomWorkloads(ctx, r, "kruise-system", WorkloadSpreadWhitelist)
	if err != nil || len(got) != 1 || got[0] != (schema.GroupKind{Group: "game.kruise.io", Kind: "GameServerSet"}) {
		t.Errorf("WorkloadSpread whitelist: %v, %v", got, err)
	}
	if _, err := CustomWorkloads(ctx, r, "kruise-system", PersistentPodStateWhitelist); err == nil || !strings.Contains(err.Error(), PersistentPodStateWhitelist) {
		t.Errorf("a malformed entry: %v", err)
	}
	for _, ns := range []string{"elsewhere"} {
		if got, err := CustomWorkloads(ctx, r, ns, WorkloadSpreadWhitelist); err != nil || len(got) != 0 {
			t.Errorf("no ConfigMap: %v, %v", got, err)
		}
	}
	if got, err := CustomWorkloads(ctx, nil, "kruise-system", WorkloadSpreadWhitelist); err != nil || got != nil {
		t.Errorf("no reader: %v, %v", got, err)
	}
}
