package workloadloop

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/revision"
)

// A pod labelled with a revision the cache does not hold (written a moment ago while the cache's
// watch was broken) makes the revisions be read from the API server: the planner never sees a pod
// of an unknown revision (which it would recreate) only because the cache lags. Pods whose
// revisions the cache holds, by name or by hash, read nothing more.
func TestRevisionsReadLiveForAnUnknownPodRevision(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "cs-uid"},
		Spec: v1alpha1.CloneSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v2"}}}}}}
	gvk := v1alpha1.SchemeGroupVersion.WithKind("CloneSet")
	rev := func(name string, number int64) *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: "web", UID: cs.UID,
				Controller: ptr.To(true)}}}, Revision: number}
	}
	cached := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rev("web-old", 1)).Build()
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(rev("web-old", 1), rev("web-new", 2)).Build()
	b := &Base{Client: cached, APIReader: live}
	pod := func(label string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + label, Labels: map[string]string{"controller-revision-hash": label}}}
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	for name, tc := range map[string]struct {
		pods     []*corev1.Pod
		wantLive bool
	}{
		"known by name":   {[]*corev1.Pod{pod("web-old")}, false},
		"known by hash":   {[]*corev1.Pod{pod("old")}, false},
		"unlabelled":      {[]*corev1.Pod{pod("")}, false},
		"unknown: live":   {[]*corev1.Pod{pod("web-old"), pod("web-new")}, true},
		"unknown by hash": {[]*corev1.Pod{pod("new")}, true},
	} {
		t.Run(name, func(t *testing.T) {
			revs, err := b.Revisions(context.Background(), cs, gvk, sel, revision.Input{Template: &cs.Spec.Template}, nil, tc.pods)
			if err != nil {
				t.Fatal(err)
			}
			if _, got := revs.ByName["web-new"]; got != tc.wantLive {
				t.Errorf("web-new read: %v, want %v (revisions %v)", got, tc.wantLive, keys(revs.ByName))
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
