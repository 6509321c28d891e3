package sandbox

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// stage is the part of a kwok Stage this test checks.
type stage struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ResourceRef struct {
			Kind string `json:"kind"`
		} `json:"resourceRef"`
		Selector struct {
			MatchExpressions []struct {
				Key      string   `json:"key"`
				Operator string   `json:"operator"`
				Values   []string `json:"values"`
			} `json:"matchExpressions"`
		} `json:"selector"`
		Next struct {
			Delete  bool `json:"delete"`
			Patches []struct {
				Subresource string `json:"subresource"`
				Type        string `json:"type"`
				Template    string `json:"template"`
			} `json:"patches"`
		} `json:"next"`
	} `json:"spec"`
}

func TestStagesModelTheKubelet(t *testing.T) {
	all, err := Stages()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]stage{}
	for _, doc := range strings.Split(all, "\n---\n") {
		var s stage
		if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("stage does not parse: %v\n%s", err, doc)
		}
		if s.Kind != "Stage" {
			t.Fatalf("document is a %q, not a Stage:\n%s", s.Kind, doc)
		}
		if _, dup := byName[s.Metadata.Name]; dup {
			t.Fatalf("stage %q defined twice", s.Metadata.Name)
		}
		byName[s.Metadata.Name] = s
	}
	for _, want := range []string{"kruise-node-initialize", "kruise-node-heartbeat", "kruise-pod-create", "kruise-pod-start",
		"kruise-pod-gates", "kruise-pod-image-changed", "kruise-pod-restarted", "kruise-pod-delete"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("stage %s is missing", want)
		}
	}
	for name, s := range byName {
		for _, p := range s.Spec.Next.Patches {
			// A JSON merge patch would replace the whole conditions list and drop the conditions
			// other controllers own (readiness gates); only strategic merge keeps them.
			if p.Subresource != "status" || p.Type != "strategic" {
				t.Errorf("stage %s patches %q with %q; want the status subresource with a strategic merge patch", name, p.Subresource, p.Type)
			}
		}
	}
	// Only the owner of a readiness gate may set its condition: no stage writes a gate's condition.
	for name, s := range byName {
		for _, p := range s.Spec.Next.Patches {
			if strings.Contains(p.Template, "range .spec.readinessGates") && strings.Contains(p.Template, "type: {{ .conditionType") {
				t.Errorf("stage %s writes readiness-gate conditions itself", name)
			}
		}
	}
	if !byName["kruise-pod-delete"].Spec.Next.Delete {
		t.Error("kruise-pod-delete does not delete the pod")
	}
}
