package inplace

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// deferredWire is the JSON form of a Deferred, the one OpenKruise writes in
// apps.kruise.io/inplace-update-grace, so that either manager finishes a deferred update the other
// started: metadata changes as a strategic-merge patch of the pod ({"metadata":{"labels":…,
// "annotations":…}}, base64 in JSON), the containers restarted for their env as the keys of
// containerRefMetadata. Labels, Annotations and EnvFromMetadataContainers are read for annotations
// written by earlier Kruise versions.
type deferredWire struct {
	Revision              string                                 `json:"revision"`
	ContainerImages       map[string]string                      `json:"containerImages,omitempty"`
	ContainerRefMetadata  map[string]metav1.ObjectMeta           `json:"containerRefMetadata,omitempty"`
	ContainerResources    map[string]corev1.ResourceRequirements `json:"containerResources,omitempty"`
	MetaDataPatch         []byte                                 `json:"metaDataPatch,omitempty"`
	UpdateEnvFromMetadata bool                                   `json:"updateEnvFromMetadata,omitempty"`
	GraceSeconds          int32                                  `json:"graceSeconds,omitempty"`

	Labels                    map[string]*string `json:"labels,omitempty"`
	Annotations               map[string]*string `json:"annotations,omitempty"`
	EnvFromMetadataContainers []string           `json:"envFromMetadataContainers,omitempty"`
}

// metadataPatch is the shape of metaDataPatch.
type metadataPatch struct {
	Metadata struct {
		Labels      map[string]*string `json:"labels,omitempty"`
		Annotations map[string]*string `json:"annotations,omitempty"`
	} `json:"metadata"`
}

// MarshalJSON writes d in OpenKruise's form.
func (d Deferred) MarshalJSON() ([]byte, error) {
	w := deferredWire{Revision: d.Revision, ContainerImages: d.ContainerImages, ContainerResources: d.ContainerResources,
		GraceSeconds: d.GraceSeconds}
	if len(d.Labels) > 0 || len(d.Annotations) > 0 {
		var p metadataPatch
		p.Metadata.Labels, p.Metadata.Annotations = d.Labels, d.Annotations
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		w.MetaDataPatch = raw
	}
	if len(d.EnvFromMetadataContainers) > 0 {
		w.UpdateEnvFromMetadata = true
		w.ContainerRefMetadata = map[string]metav1.ObjectMeta{}
		for _, name := range d.EnvFromMetadataContainers {
			w.ContainerRefMetadata[name] = metav1.ObjectMeta{}
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads d from OpenKruise's form (or an earlier Kruise one).
func (d *Deferred) UnmarshalJSON(data []byte) error {
	var w deferredWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*d = Deferred{UpdateSpec: UpdateSpec{Revision: w.Revision, ContainerImages: w.ContainerImages,
		ContainerResources: w.ContainerResources, Labels: w.Labels, Annotations: w.Annotations,
		EnvFromMetadataContainers: w.EnvFromMetadataContainers}, GraceSeconds: w.GraceSeconds}
	if len(w.MetaDataPatch) > 0 {
		var p metadataPatch
		if err := json.Unmarshal(w.MetaDataPatch, &p); err != nil {
			return fmt.Errorf("metaDataPatch: %w", err)
		}
		d.Labels, d.Annotations = overlay(d.Labels, p.Metadata.Labels), overlay(d.Annotations, p.Metadata.Annotations)
	}
	for name := range w.ContainerRefMetadata {
		if !slices.Contains(d.EnvFromMetadataContainers, name) {
			d.EnvFromMetadataContainers = append(d.EnvFromMetadataContainers, name)
		}
	}
	slices.Sort(d.EnvFromMetadataContainers)
	return nil
}
