package inplace

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
)

// compareFields compares two values of the same struct type field by field with
// equality.Semantic.DeepEqual and returns "<prefix>.<json name> changed" for every field that differs,
// in declaration order, skipping the fields whose JSON names are in skip. Because it walks the type
// rather than a list of known fields, fields added to the API later are compared too.
func compareFields(prefix string, a, b any, skip ...string) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() || va.Kind() != reflect.Struct {
		panic(fmt.Sprintf("inplace: compareFields on %s and %s", va.Type(), vb.Type()))
	}
	var reasons []string
	for i := 0; i < va.NumField(); i++ {
		f := va.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if contains(skip, name) {
			continue
		}
		if !equality.Semantic.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			reasons = append(reasons, prefix+"."+name+" changed")
		}
	}
	return reasons
}

// jsonName is the field's name on the wire: its json tag name, or the Go name without one.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return f.Name
	}
	return name
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
