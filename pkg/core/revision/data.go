package revision

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	sigsjson "sigs.k8s.io/json"
)

// wireData is the JSON shape of ControllerRevision.Data: a strategic-merge patch of the owner
// that restores the template wholesale. VolumeClaimTemplates is only read: revisions written by
// Kruise before v0.2 recorded them there; they take no part in comparisons.
type wireData struct {
	Spec wireSpec `json:"spec"`
}

type wireSpec struct {
	Template             *wireTemplate                  `json:"template"`
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`
}

type wireTemplate struct {
	corev1.PodTemplateSpec `json:",inline"`
	// Patch is the strategic-merge directive; "replace" makes the patch restore the template
	// instead of merging into it.
	Patch string `json:"$patch,omitempty"`
}

const patchReplace = "replace"

// encodeData returns Data for in's template (its pod template, or its Object) in OpenKruise's
// canonical form, byte for byte: the template encoded, read back into generic JSON values and
// encoded again, so every object's keys are sorted, inside {"spec":{"template":{…,"$patch":"replace"}}}.
// (OpenKruise reads numbers back as float64: an integer beyond 2^53 loses precision there and keeps
// it here, the one input whose name differs.) Every object metadata (a "metadata" member whose
// value is an object) carries "creationTimestamp":null, as the Kubernetes libraries OpenKruise
// v1.9.0 is built with encode a zero timestamp (ours omit it). The form is also what the API server
// writes back when it re-encodes a revision on a metadata patch, so such patches leave Data
// unchanged (Data is immutable). No template encodes as an empty pod template.
func encodeData(in Input) ([]byte, error) {
	var tmpl any = in.Template
	if in.Object != nil {
		tmpl = in.Object
	} else if in.Template == nil {
		tmpl = &corev1.PodTemplateSpec{}
	}
	raw, err := json.Marshal(tmpl)
	if err != nil {
		return nil, err
	}
	var t map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, errors.New("the template encodes as null")
	}
	nullTimestamps(t)
	t["$patch"] = patchReplace
	return json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
}

// nullTimestamps gives every object metadata within v (generic JSON values) that has no creation
// timestamp "creationTimestamp":null. Only Kubernetes object metadata is a "metadata" member whose
// value is an object: label, annotation and other string maps hold strings.
func nullTimestamps(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if meta, ok := e.(map[string]any); ok && k == "metadata" {
				if _, has := meta["creationTimestamp"]; !has {
					meta["creationTimestamp"] = nil
				}
			}
			nullTimestamps(e)
		}
	case []any:
		for _, e := range x {
			nullTimestamps(e)
		}
	}
}

// TemplateOf returns the pod template recorded in rev. Fields unknown to this version of the API
// are ignored, as the API server would. The result shares no memory with rev.
func TemplateOf(rev *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	if rev == nil {
		return nil, errors.New("revision: nil ControllerRevision")
	}
	raw, err := dataBytes(rev)
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	w, err := decodeData(raw, false)
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	return &w.Spec.Template.PodTemplateSpec, nil
}

// Equal reports whether two revisions record the same pod template: their Data are the same
// bytes, or equal as JSON values (key order and spacing aside), or, when both decode without
// unknown fields, their templates are semantically equal (quantities by value, nil and empty
// lists alike, a zero creation timestamp present or not). Names, labels, annotations, revision
// numbers and volume claim templates are not compared. Empty Data, and unreadable Data other than
// the same bytes, equal nothing.
func Equal(a, b *appsv1.ControllerRevision) bool {
	if a == nil || b == nil {
		return a == b
	}
	ra, errA := dataBytes(a)
	rb, errB := dataBytes(b)
	if errA != nil || errB != nil {
		return false
	}
	if bytes.Equal(ra, rb) || jsonEqual(ra, rb) {
		return true
	}
	wa, errA := decodeData(ra, true)
	wb, errB := decodeData(rb, true)
	if errA != nil || errB != nil || wa.Spec.Template.Patch != wb.Spec.Template.Patch {
		return false
	}
	return equality.Semantic.DeepEqual(wa.Spec.Template.PodTemplateSpec, wb.Spec.Template.PodTemplateSpec)
}

// dataBytes returns the JSON of rev.Data: Raw as stored by the API server, or Object encoded.
func dataBytes(rev *appsv1.ControllerRevision) ([]byte, error) {
	if len(rev.Data.Raw) > 0 {
		return rev.Data.Raw, nil
	}
	if rev.Data.Object != nil {
		raw, err := json.Marshal(rev.Data.Object)
		if err != nil {
			return nil, fmt.Errorf("encode data: %w", err)
		}
		return raw, nil
	}
	return nil, errors.New("empty data")
}

// decodeData reads Data. With strict, unknown and duplicate fields are errors.
func decodeData(raw []byte, strict bool) (wireData, error) {
	var w wireData
	if strict {
		strictErrs, err := sigsjson.UnmarshalStrict(raw, &w)
		if err != nil {
			return wireData{}, fmt.Errorf("decode data: %w", err)
		}
		if len(strictErrs) > 0 {
			return wireData{}, fmt.Errorf("decode data: %w", errors.Join(strictErrs...))
		}
	} else if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, &w); err != nil {
		return wireData{}, fmt.Errorf("decode data: %w", err)
	}
	if w.Spec.Template == nil {
		return wireData{}, errors.New("decode data: no spec.template")
	}
	return w, nil
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if sigsjson.UnmarshalCaseSensitivePreserveInts(a, &va) != nil ||
		sigsjson.UnmarshalCaseSensitivePreserveInts(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
