package sidecarrules

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// hotUpgradeNames returns the names of a hot-upgrade sidecar's two copies.
func hotUpgradeNames(name string) (string, string) {
	return name + "-1", name + "-2"
}

// hotUpgradeCopies turns a prepared hot-upgrade sidecar c into its two copies, as OpenKruise
// injects them: <name>-1 working with c's image, <name>-2 idle with the hotUpgradeEmptyImage, each
// reading its version and its twin's from pod annotations (version "1" for the working copy, "0"
// for the idle one). It records the annotations in b and <name>-1 as working in working.
func hotUpgradeCopies(c *v1beta1.SidecarSetContainer, working map[string]string, b *built) []*v1beta1.SidecarSetContainer {
	name1, name2 := hotUpgradeNames(c.Name)
	c1, c2 := c.DeepCopy(), c.DeepCopy()
	c1.Name, c2.Name = name1, name2
	c2.Image = c.UpgradeStrategy.HotUpgradeEmptyImage
	addVersionEnv(&c1.Container)
	addVersionEnv(&c2.Container)
	if b.hotAnnotations == nil {
		b.hotAnnotations = map[string]string{}
	}
	b.hotAnnotations[VersionAnnotationPrefix+name1] = "1"
	b.hotAnnotations[VersionAltAnnotationPrefix+name1] = "0"
	b.hotAnnotations[VersionAnnotationPrefix+name2] = "0"
	b.hotAnnotations[VersionAltAnnotationPrefix+name2] = "1"
	working[c.Name] = name1
	raw, _ := json.Marshal(working) // a map of strings always encodes
	b.hotAnnotations[WorkingHotUpgradeContainerAnnotation] = string(raw)
	return []*v1beta1.SidecarSetContainer{c1, c2}
}

func addVersionEnv(c *corev1.Container) {
	for _, kv := range [][2]string{{VersionEnv, VersionAnnotationPrefix}, {VersionAltEnv, VersionAltAnnotationPrefix}} {
		c.Env = append(c.Env, corev1.EnvVar{
			Name: kv[0],
			ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
				FieldPath: fmt.Sprintf("metadata.annotations['%s%s']", kv[1], c.Name),
			}},
		})
	}
}
