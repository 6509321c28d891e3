package inplace

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

func TestSpecPatchOperations(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{RevisionLabel: "r1", "a/b": "1", "gone": "x"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "side", Image: "s:1"}, {Name: "app", Image: "a:1"}}},
	}
	spec := &UpdateSpec{Revision: "r2", ContainerImages: map[string]string{"app": "a:2"},
		Labels: map[string]*string{"a/b": ptr.To("2"), "gone": nil, "absent": nil}}
	data, err := SpecPatch(pod, spec, &appspub.InPlaceUpdateState{Revision: "r2"}, Options{}.RevisionLabels("r2"))
	if err != nil {
		t.Fatal(err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(data, &ops); err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, op := range ops {
		got = append(got, op["op"].(string)+" "+op["path"].(string))
	}
	want := []string{
		"test /metadata/labels/controller-revision-hash",
		"test /spec/containers/1/name", "test /spec/containers/1/image", "replace /spec/containers/1/image",
		"add /metadata/labels/a~1b", "add /metadata/labels/controller-revision-hash", "remove /metadata/labels/gone",
		"add /metadata/annotations",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := SpecPatch(pod, &UpdateSpec{ContainerImages: map[string]string{"missing": "x"}}, &appspub.InPlaceUpdateState{}, nil); err == nil {
		t.Error("a patch for a container the pod lacks was built")
	}
}

func TestConditionPatchSetsReadyOnlyWhenGoingFalse(t *testing.T) {
	down, _ := ConditionPatch(appspub.InPlaceUpdateReady, corev1.ConditionFalse, "r", "m", time.Unix(0, 0))
	up, _ := ConditionPatch(appspub.InPlaceUpdateReady, corev1.ConditionTrue, "", "", time.Unix(0, 0))
	if !strings.Contains(string(down), `"type":"Ready","status":"False"`) {
		t.Errorf("gate False must set Ready False in the same write: %s", down)
	}
	if strings.Contains(string(up), `"type":"Ready"`) {
		t.Errorf("gate True must leave Ready to the kubelet: %s", up)
	}
}

func TestGatePatchLeavesReadyToTheKubelet(t *testing.T) {
	gate, _ := GatePatch(appspub.InPlaceUpdateReady, "r", "m", time.Unix(0, 0))
	if !strings.Contains(string(gate), `"type":"InPlaceUpdateReady","status":"False"`) || strings.Contains(string(gate), `"type":"Ready"`) {
		t.Errorf("the gate alone, False: %s", gate)
	}
	ready, _ := ReadyPatch("r", "m", time.Unix(0, 0))
	if !strings.Contains(string(ready), `"type":"Ready","status":"False","lastProbeTime":null,"lastTransitionTime":"1970-01-01T00:00:00Z","reason":"r"`) ||
		strings.Contains(string(ready), "InPlaceUpdateReady") {
		t.Errorf("Ready alone, False: %s", ready)
	}
}

func TestRevisionLabels(t *testing.T) {
	tests := []struct {
		opts Options
		want map[string]string
	}{
		{Options{}, map[string]string{RevisionLabel: "web-5d8f9c"}},
		{Options{PodTemplateHash: true}, map[string]string{RevisionLabel: "web-5d8f9c", PodTemplateHashLabel: "5d8f9c"}},
		{Options{PodTemplateHash: true, ShortRevisionHash: true}, map[string]string{RevisionLabel: "5d8f9c", PodTemplateHashLabel: "5d8f9c"}},
	}
	for _, tt := range tests {
		if got := tt.opts.RevisionLabels("web-5d8f9c"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v: RevisionLabels = %v, want %v", tt.opts, got, tt.want)
		}
	}
	for label, want := range map[string]bool{"web-5d8f9c": true, "5d8f9c": true, "": false, "web-5d8f9d": false, "5d8f9": false} {
		if got := AtRevision(label, "web-5d8f9c"); got != want {
			t.Errorf("AtRevision(%q, web-5d8f9c) = %v, want %v", label, got, want)
		}
	}
}
