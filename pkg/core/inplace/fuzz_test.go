package inplace

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// FuzzPlanNeverPanics decodes two pod templates from JSON and checks that Plan returns exactly one
// outcome, leaves its inputs alone, and plans a template against itself as a revision-only update.
func FuzzPlanNeverPanics(f *testing.F) {
	base, _ := json.Marshal(baseTemplate())
	changed := baseTemplate()
	changed.Labels["tier"] = "back"
	changed.Spec.Containers[0].Image = "app:2"
	changed.Spec.Containers[0].Resources = resources("1", "2", "1Gi", "2Gi")
	changedJSON, _ := json.Marshal(changed)
	f.Add(base, changedJSON, true)
	f.Add(base, changedJSON, false)
	f.Add(base, []byte(`{"spec":{"containers":[{"name":"app"},{"name":"app"}]}}`), true)
	f.Add([]byte(`{}`), []byte(`{"metadata":{"labels":{"a":""}},"spec":{"initContainers":[{"name":"i","restartPolicy":"Always","env":[{"name":"E","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['a']"}}}]}]}}`), false)
	f.Add([]byte(`{"spec":{"resources":{"limits":{"cpu":"1"}},"containers":[{"name":"a","resources":{"requests":{"cpu":"0"}}}]}}`),
		[]byte(`{"spec":{"resources":{"limits":{"cpu":"1"}},"containers":[{"name":"a","resources":{"requests":{"cpu":"1m"}}}]}}`), true)
	f.Fuzz(func(t *testing.T, oldJSON, newJSON []byte, vs bool) {
		var oldT, newT corev1.PodTemplateSpec
		if json.Unmarshal(oldJSON, &oldT) != nil || json.Unmarshal(newJSON, &newT) != nil {
			return
		}
		oldBefore, newBefore := oldT.DeepCopy(), newT.DeepCopy()
		d := Plan(&oldT, &newT, "r", Options{VerticalScaling: vs, EnvFromMetadata: true})
		if d.InPlace() == (len(d.RecreateReasons) > 0) {
			t.Fatalf("Decision must be either in place or recreate: %s", render(d))
		}
		if !equality.Semantic.DeepEqual(&oldT, oldBefore) || !equality.Semantic.DeepEqual(&newT, newBefore) {
			t.Fatalf("Plan modified its inputs")
		}
		if duplicateReasons(containerNames(oldT.Spec.Containers), "old") != nil {
			return
		}
		if self := Plan(&oldT, oldBefore, "r", Options{VerticalScaling: vs, EnvFromMetadata: true}); !self.InPlace() || !self.Spec.IsRevisionOnly() {
			t.Fatalf("a template against itself planned as %s", render(self))
		}
	})
}
