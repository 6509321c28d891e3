package revision

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestEqual(t *testing.T) {
	const (
		tpl       = `{"spec":{"template":{"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"app","image":"app:1"}]},"$patch":"replace"}}}`
		reordered = `{ "spec": { "template": { "$patch": "replace", "spec": {"containers": [{"image": "app:1", "name": "app"}]}, "metadata": {"labels": {"b": "2", "a": "1"}} } } }`
		otherImg  = `{"spec":{"template":{"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"app","image":"app:2"}]},"$patch":"replace"}}}`
		noPatch   = `{"spec":{"template":{"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"app","image":"app:1"}]}}}}`
		// How another version of the API types serializes the same template.
		oldTypes  = `{"spec":{"template":{"metadata":{"creationTimestamp":null,"labels":{"a":"1","b":"2"}},"spec":{"containers":[{"name":"app","image":"app:1","resources":{},"args":[]}]},"$patch":"replace"}}}`
		cpuMilli  = `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1000m"}}}]},"$patch":"replace"}}}`
		cpuWhole  = `{"spec":{"template":{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"1"}}}]},"$patch":"replace"}}}`
		unknownA  = `{"spec":{"template":{"spec":{"futureField":"a","containers":[{"name":"app"}]},"$patch":"replace"}}}`
		unknownB  = `{"spec":{"template":{"spec":{"futureField":"b","containers":[{"name":"app"}]},"$patch":"replace"}}}`
		unknownA2 = `{"spec":{"template":{"$patch":"replace","spec":{"containers":[{"name":"app"}],"futureField":"a"}}}}`
	)
	rev := func(data string) *appsv1.ControllerRevision { return rawRevision("r", 1, data) }
	withOtherMeta := rev(tpl)
	withOtherMeta.Name, withOtherMeta.Revision, withOtherMeta.Labels = "other", 9, map[string]string{HashLabel: "x"}
	tests := []struct {
		name string
		a, b *appsv1.ControllerRevision
		want bool
	}{
		{name: "same bytes", a: rev(tpl), b: rev(tpl), want: true},
		{name: "key order and spacing do not matter", a: rev(tpl), b: rev(reordered), want: true},
		{name: "name, number and labels do not matter", a: rev(tpl), b: withOtherMeta, want: true},
		{name: "serialization of older API types", a: rev(tpl), b: rev(oldTypes), want: true},
		{name: "quantities compare by value", a: rev(cpuMilli), b: rev(cpuWhole), want: true},
		{name: "same unknown field", a: rev(unknownA), b: rev(unknownA2), want: true},
		{name: "different unknown field", a: rev(unknownA), b: rev(unknownB)},
		{name: "different image", a: rev(tpl), b: rev(otherImg)},
		{name: "missing $patch directive", a: rev(tpl), b: rev(noPatch)},
		{name: "raw and object data", a: rev(tpl),
			b: &appsv1.ControllerRevision{Data: runtime.RawExtension{Object: &runtime.Unknown{Raw: []byte(reordered)}}}, want: true},
		{name: "unreadable data equals only the same bytes", a: rev("{"), b: rev("{"), want: true},
		{name: "unreadable data equals nothing else", a: rev("{"), b: rev("{ ")},
		{name: "empty data equals nothing", a: rev(""), b: rev("")},
		{name: "both nil", want: true},
		{name: "one nil", a: rev(tpl)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(a, b) = %v, want %v", got, tt.want)
			}
			if got := Equal(tt.b, tt.a); got != tt.want {
				t.Errorf("Equal(b, a) = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEqualNewRevisions(t *testing.T) {
	a := mustNew(t, Input{Template: baseTemplate()}, 1, nil)
	b := mustNew(t, Input{Template: mapOrderTemplate(false)}, 2, nil)
	c := mustNew(t, Input{Template: mapOrderTemplate(true)}, 3, nil)
	if Equal(a, b) || !Equal(b, c) {
		t.Errorf("Equal(a, b) = %v, Equal(b, c) = %v; want false, true", Equal(a, b), Equal(b, c))
	}
}
