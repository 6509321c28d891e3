package defaults

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

type tcase[T any] struct {
	name string
	in   *T
	want *T
}

// run checks each case (defaulting in gives want) and that defaulting the
// result again changes nothing.
func run[T any](t *testing.T, cases []tcase[T], fn func(*T), clone func(*T) *T) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := clone(c.in)
			fn(got)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("defaulted object differs\n got: %s\nwant: %s", js(got), js(c.want))
			}
			again := clone(got)
			fn(again)
			if !reflect.DeepEqual(again, got) {
				t.Errorf("not idempotent\n once: %s\ntwice: %s", js(got), js(again))
			}
		})
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }
func bp(v bool) *bool    { return &v }
func sp(v string) *string {
	return &v
}
func ioi(v int32) *intstr.IntOrString {
	x := intstr.FromInt32(v)
	return &x
}
func ios(v string) *intstr.IntOrString {
	x := intstr.FromString(v)
	return &x
}
