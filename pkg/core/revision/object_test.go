package revision

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A template that is not a pod's is recorded whole, every nested object metadata with a null
// creation timestamp; the revision carries the hash label alone and none of the owner's annotations.
func TestNewOfObject(t *testing.T) {
	type workloadTemplate struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	tmpl := &workloadTemplate{Metadata: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	tmpl.Spec.Template.Labels = map[string]string{"app": "web"}
	owner := &metav1.ObjectMeta{Name: "ud", Namespace: "ns", Annotations: map[string]string{"note": "x"}}
	rev, err := New(owner, schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "UnitedDeployment"}, Input{Object: tmpl}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := string(rev.Data.Raw)
	if strings.Count(data, `"creationTimestamp":null`) != 2 || !strings.HasPrefix(data, `{"spec":{"template":{"$patch":"replace","metadata":`) {
		t.Errorf("data %s", data)
	}
	if len(rev.Labels) != 1 || rev.Labels[HashLabel] == "" || len(rev.Annotations) != 0 || rev.Name != "ud-"+rev.Labels[HashLabel] {
		t.Errorf("revision %s labels %v annotations %v", rev.Name, rev.Labels, rev.Annotations)
	}
}
