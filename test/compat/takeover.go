package compat

import (
	"fmt"
	"os"
	"path/filepath"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

// Takeover is the fixture of objects OpenKruise v1.9.0's own manager wrote (the oracle's
// takeover/ folder): CloneSets with their pods, revisions and claims, as dumped.
type Takeover struct {
	CloneSets []v1alpha1.CloneSet
	Revisions []appsv1.ControllerRevision
	Pods      []corev1.Pod
	Claims    []corev1.PersistentVolumeClaim
	Volumes   []corev1.PersistentVolume
}

// ReadTakeover reads the takeover fixture under the oracle folder.
func ReadTakeover(repoRoot string) (*Takeover, error) {
	dir := filepath.Join(OracleDir(repoRoot), "takeover")
	tk := &Takeover{}
	var cs v1alpha1.CloneSetList
	var revs appsv1.ControllerRevisionList
	var pods corev1.PodList
	var pvcs corev1.PersistentVolumeClaimList
	var pvs corev1.PersistentVolumeList
	for file, into := range map[string]any{
		"clonesets.apps.kruise.io.yaml": &cs, "controllerrevisions.yaml": &revs, "pods.yaml": &pods,
		"persistentvolumeclaims.yaml": &pvcs, "persistentvolumes.yaml": &pvs,
	} {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	tk.CloneSets, tk.Revisions, tk.Pods, tk.Claims, tk.Volumes = cs.Items, revs.Items, pods.Items, pvcs.Items, pvs.Items
	return tk, nil
}
