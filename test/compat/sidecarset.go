package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// SidecarSetFixture is SidecarSet sc-log of the takeover workloads dump: what the user applied
// (its last-applied-configuration, with the image patched to example.com/log:v2 as the dump's
// history has it), and what OpenKruise stored: the spec (generic JSON) and the annotations.
type SidecarSetFixture struct {
	// Applied is the user's object, JSON.
	Applied     []byte
	StoredSpec  any
	Annotations map[string]string
}

// ReadSidecarSetFixture reads sc-log from the oracle folder of repoRoot (OracleDir).
func ReadSidecarSetFixture(repoRoot string) (*SidecarSetFixture, error) {
	file := filepath.Join(OracleDir(repoRoot), "takeover", "workloads", "sidecarsets.apps.kruise.io.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the OpenKruise takeover fixture (set KRUISE_COMPAT_DIR to the openkruise-v1.9.0 folder): %w", err)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec any `json:"spec"`
		} `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, item := range list.Items {
		if item.Metadata.Name != "sc-log" {
			continue
		}
		applied := item.Metadata.Annotations["kubectl.kubernetes.io/last-applied-configuration"]
		if strings.Count(applied, `"example.com/log:v1"`) != 1 {
			return nil, fmt.Errorf("%s: the last-applied configuration does not name image example.com/log:v1 once: %s", file, applied)
		}
		return &SidecarSetFixture{Applied: []byte(strings.Replace(applied, `"example.com/log:v1"`, `"example.com/log:v2"`, 1)),
			StoredSpec: item.Spec, Annotations: item.Metadata.Annotations}, nil
	}
	return nil, fmt.Errorf("%s: no SidecarSet sc-log", file)
}
