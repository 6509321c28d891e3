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

// TemplateOf returns the pod template recorded in rev. Fields unknown to this version of the API
// are ignored, as the API server would.
func TemplateOf(rev *appsv1.ControllerRevision) (*corev1.PodTemplateSpec, error) {
	in, err := InputOf(rev)
	if err != nil {
		return nil, err
	}
	return in.Template, nil
}

// InputOf returns the pod template and volume claim templates recorded in rev. The result
// shares no memory with rev.
func InputOf(rev *appsv1.ControllerRevision) (Input, error) {
	if rev == nil {
		return Input{}, errors.New("revision: nil ControllerRevision")
	}
	raw, err := dataBytes(rev)
	if err != nil {
		return Input{}, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	w, err := decodeData(raw, false)
	if err != nil {
		return Input{}, fmt.Errorf("revision %s: %w", rev.Name, err)
	}
	return Input{Template: &w.Spec.Template.PodTemplateSpec, VolumeClaimTemplates: w.Spec.VolumeClaimTemplates}, nil
}

// Equal reports whether two revisions record the same content: their Data are the same bytes, or
// equal as JSON values (key order and spacing aside), or, when both decode without unknown fields,
// their templates and volume claim templates are semantically equal (quantities by value, nil and
// empty lists alike, fields serialized differently by another version of the API types). Names,
// labels and revision numbers are not compared. Empty Data, and unreadable Data other than the
// same bytes, equal nothing.
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
	return equality.Semantic.DeepEqual(wa.Spec.Template.PodTemplateSpec, wb.Spec.Template.PodTemplateSpec) &&
		equality.Semantic.DeepEqual(wa.Spec.VolumeClaimTemplates, wb.Spec.VolumeClaimTemplates)
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
