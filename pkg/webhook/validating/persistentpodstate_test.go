package validating

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/webhook/internal/webhookfuzz"
)

// validPersistentPodState keeps StatefulSet db's pods in their zone, and on their node if it can.
func validPersistentPodState(name string) *v1alpha1.PersistentPodState {
	return &v1alpha1.PersistentPodState{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: v1alpha1.PersistentPodStateSpec{
			TargetReference:            v1alpha1.PersistentPodStateTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"},
			RequiredPersistentTopology: &v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{"topology.kubernetes.io/zone"}},
			PreferredPersistentTopology: []v1alpha1.PersistentPodStatePreferredTopologyTerm{{Weight: 100,
				Preference: v1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{"kubernetes.io/hostname"}}}},
		},
	}
}

func TestValidatePersistentPodState(t *testing.T) {
	pRef := "spec.targetRef"
	custom := []schema.GroupKind{{Group: "game.kruise.io", Kind: "GameServerSet"}}
	cases := []struct {
		name   string
		mutate func(*v1alpha1.PersistentPodStateSpec)
		want   []want
	}{
		{"valid", func(*v1alpha1.PersistentPodStateSpec) {}, nil},
		{"apps/v1 StatefulSet, required topology only", func(s *v1alpha1.PersistentPodStateSpec) {
			s.TargetReference.APIVersion, s.PreferredPersistentTopology = "apps/v1", nil
		}, nil},
		{"empty targetRef", func(s *v1alpha1.PersistentPodStateSpec) {
			s.TargetReference = v1alpha1.PersistentPodStateTargetReference{}
		},
			[]want{{field.ErrorTypeRequired, pRef + ".apiVersion"}, {field.ErrorTypeRequired, pRef + ".kind"}, {field.ErrorTypeRequired, pRef + ".name"}}},
		{"a Deployment", func(s *v1alpha1.PersistentPodStateSpec) {
			s.TargetReference.APIVersion, s.TargetReference.Kind = "apps/v1", "Deployment"
		},
			[]want{{field.ErrorTypeInvalid, pRef + ".kind"}}},
		{"a StatefulSet of another group", func(s *v1alpha1.PersistentPodStateSpec) { s.TargetReference.APIVersion = "example.com/v1" },
			[]want{{field.ErrorTypeInvalid, pRef + ".kind"}}},
		{"a whitelisted custom workload", func(s *v1alpha1.PersistentPodStateSpec) {
			s.TargetReference.APIVersion, s.TargetReference.Kind = "game.kruise.io/v1alpha1", "GameServerSet"
		}, nil},
		{"no topology", func(s *v1alpha1.PersistentPodStateSpec) {
			s.RequiredPersistentTopology, s.PreferredPersistentTopology = nil, nil
		},
			[]want{{field.ErrorTypeRequired, "spec.requiredPersistentTopology"}}},
		{"topology keys that are no label keys", func(s *v1alpha1.PersistentPodStateSpec) {
			s.RequiredPersistentTopology.NodeTopologyKeys = []string{"", "-zone"}
		}, []want{{field.ErrorTypeRequired, "spec.requiredPersistentTopology.nodeTopologyKeys[0]"},
			{field.ErrorTypeInvalid, "spec.requiredPersistentTopology.nodeTopologyKeys[1]"}}},
		{"preferred weight out of range", func(s *v1alpha1.PersistentPodStateSpec) { s.PreferredPersistentTopology[0].Weight = 101 },
			[]want{{field.ErrorTypeInvalid, "spec.preferredPersistentTopology[0].weight"}}},
		{"annotation key invalid", func(s *v1alpha1.PersistentPodStateSpec) {
			s.PersistentPodAnnotations = []v1alpha1.PersistentPodStatePersistentPodAnnotation{{Key: "example.com/ip"}, {Key: "a b"}}
		}, []want{{field.ErrorTypeInvalid, "spec.persistentPodAnnotations[1].key"}}},
		{"unknown retention policy", func(s *v1alpha1.PersistentPodStateSpec) { s.PersistentPodStateRetentionPolicy = "Never" },
			[]want{{field.ErrorTypeNotSupported, "spec.persistentPodStateRetentionPolicy"}}},
		{"retention WhenDeleted", func(s *v1alpha1.PersistentPodStateSpec) {
			s.PersistentPodStateRetentionPolicy = v1alpha1.PersistentPodStateRetainWhenDeleted
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pps := validPersistentPodState("db")
			tc.mutate(&pps.Spec)
			checkErrors(t, ValidatePersistentPodState(pps, custom), tc.want)
		})
	}
}

func TestValidatePersistentPodStateUpdate(t *testing.T) {
	old := validPersistentPodState("db")
	retained := old.DeepCopy()
	retained.Spec.PersistentPodStateRetentionPolicy = v1alpha1.PersistentPodStateRetainWhenDeleted
	checkErrors(t, ValidatePersistentPodStateUpdate(retained, old, nil), nil)
	retargeted := old.DeepCopy()
	retargeted.Spec.TargetReference.APIVersion = "apps/v1"
	checkErrors(t, ValidatePersistentPodStateUpdate(retargeted, old, nil), []want{{field.ErrorTypeForbidden, "spec.targetRef"}})
}

// A workload has one PersistentPodState only (in its namespace); a custom workload is accepted
// once the whitelist lists it.
func TestPersistentPodStateWebhook(t *testing.T) {
	ctx := context.Background()
	other := validPersistentPodState("db-old")
	other.Spec.TargetReference.APIVersion = "apps.kruise.io/v1alpha1"
	elsewhere := validPersistentPodState("db-elsewhere")
	elsewhere.Namespace = "other"
	whitelist := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: KruiseConfigurationName, Namespace: "kruise-system"},
		Data: map[string]string{PersistentPodStateWhitelistKey: `{"workloads":[{"Group":"game.kruise.io","Version":"v1","Kind":"GameServerSet"}]}`}}
	c := fake.NewClientBuilder().WithScheme(webhookfuzz.NewScheme(t)).WithObjects(other, elsewhere, whitelist).Build()
	v := persistentPodStateValidator{opts: PersistentPodStateOptions{Reader: c, Config: c, Namespace: "kruise-system"}}

	_, err := v.ValidateCreate(ctx, validPersistentPodState("db"))
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeInvalid, "spec.targetRef"}})
	if err == nil || !strings.Contains(err.Error(), "PersistentPodState db-old") {
		t.Errorf("want the conflict to name db-old, got %v", err)
	}
	custom := validPersistentPodState("gs")
	custom.Spec.TargetReference = v1alpha1.PersistentPodStateTargetReference{APIVersion: "game.kruise.io/v1", Kind: "GameServerSet", Name: "gs"}
	if _, err := v.ValidateCreate(ctx, custom); err != nil {
		t.Errorf("a whitelisted custom workload: %v", err)
	}
	moved := other.DeepCopy()
	moved.Spec.TargetReference.Name = "cache"
	_, err = v.ValidateUpdate(ctx, other, moved)
	checkErrors(t, causes(t, err), []want{{field.ErrorTypeForbidden, "spec.targetRef"}})
}
