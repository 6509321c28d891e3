package validating

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// decodeVersioned reads an object of kind in either version, or a List of them, defaulted as the
// defaulting webhook stores it (defaultAlpha, defaultHub), as the hub (v1beta1) version.
func decodeVersioned[A any, PA interface {
	*A
	ConvertTo(*H) error
}, H any, PH interface{ *H }](t *testing.T, data []byte, kind string, defaultAlpha func(PA), defaultHub func(PH)) []PH {
	t.Helper()
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		t.Fatal(err)
	}
	switch {
	case head.Kind == "List":
		var out []PH
		for _, item := range head.Items {
			out = append(out, decodeVersioned(t, item, kind, defaultAlpha, defaultHub)...)
		}
		return out
	case head.Kind != kind:
		return nil
	case head.APIVersion == v1alpha1.GroupVersion.String():
		alpha := PA(new(A))
		if err := yaml.Unmarshal(data, alpha); err != nil {
			t.Fatal(err)
		}
		defaultAlpha(alpha)
		hub := new(H)
		if err := alpha.ConvertTo(hub); err != nil {
			t.Fatal(err)
		}
		return []PH{PH(hub)}
	}
	hub := PH(new(H))
	if err := yaml.Unmarshal(data, hub); err != nil {
		t.Fatal(err)
	}
	defaultHub(hub)
	return []PH{hub}
}
