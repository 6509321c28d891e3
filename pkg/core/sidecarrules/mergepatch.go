package sidecarrules

import (
	"encoding/json"
	"errors"
)

// jsonObject is a JSON object whose member values stay as they were written until touched.
type jsonObject = map[string]json.RawMessage

// mergePatch applies patch to doc as a JSON merge patch (RFC 7386) and encodes the result as
// OpenKruise's library (github.com/evanphx/json-patch, v4 line) does, so annotation values match
// byte for byte: objects the merge touches are written with sorted keys and without nulls;
// values it does not touch keep their key order and number text, compacted.
func mergePatch(doc, patch []byte) ([]byte, error) {
	d, docErr := decodeObject(doc)
	p, patchErr := decodeObject(patch)
	var syntax *json.SyntaxError
	switch {
	case errors.As(docErr, &syntax), docErr == nil && d == nil:
		return nil, errors.New("invalid JSON document")
	case errors.As(patchErr, &syntax), patchErr == nil && p == nil:
		return nil, errors.New("invalid JSON merge patch")
	case docErr == nil && patchErr == nil:
		mergeObjects(d, p)
		return json.Marshal(d)
	case patchErr == nil:
		// The document is not an object: the patch replaces it.
		return json.Marshal(pruneObject(p))
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(patch, &arr); err != nil {
		return nil, errors.New("invalid JSON merge patch")
	}
	return json.Marshal(pruneArray(arr))
}

func decodeObject(raw []byte) (jsonObject, error) {
	var obj jsonObject
	err := json.Unmarshal(raw, &obj)
	return obj, err
}

func isNull(raw json.RawMessage) bool {
	var v any
	return json.Unmarshal(raw, &v) == nil && v == nil
}

func mergeObjects(doc, patch jsonObject) {
	for k, v := range patch {
		cur, ok := doc[k]
		switch {
		case isNull(v):
			delete(doc, k)
		case !ok || isNull(cur):
			doc[k] = pruneValue(v)
		default:
			doc[k] = mergeValues(cur, v)
		}
	}
}

func mergeValues(cur, patch json.RawMessage) json.RawMessage {
	c, err := decodeObject(cur)
	if err != nil || c == nil {
		return pruneValue(patch)
	}
	p, err := decodeObject(patch)
	if err != nil || p == nil {
		return patch
	}
	mergeObjects(c, p)
	return mustMarshal(c)
}

// pruneValue drops the null members of the objects in v, at any depth.
func pruneValue(v json.RawMessage) json.RawMessage {
	if obj, err := decodeObject(v); err == nil && obj != nil {
		return mustMarshal(pruneObject(obj))
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(v, &arr); err == nil && arr != nil {
		return mustMarshal(pruneArray(arr))
	}
	return v
}

func pruneObject(obj jsonObject) jsonObject {
	for k, v := range obj {
		if isNull(v) {
			delete(obj, k)
		} else {
			obj[k] = pruneValue(v)
		}
	}
	return obj
}

// pruneArray prunes the elements of arr; null elements stay.
func pruneArray(arr []json.RawMessage) []json.RawMessage {
	for i, v := range arr {
		if !isNull(v) {
			arr[i] = pruneValue(v)
		}
	}
	return arr
}

// mustMarshal encodes decoded JSON, which always encodes.
func mustMarshal(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return raw
}
