package podcontrol

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
)

// From the informer's index, a workload's pods are the cached objects themselves: the matching
// ones it controls or that have no controller, and the strays it controls; other namespaces' pods
// and other owners' are left.
func TestReadPodsFromTheIndex(t *testing.T) {
	owner := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1"}}
	ref := []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("ReplicationController"))}
	other := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "api", UID: "u2"}}
	otherRef := []metav1.OwnerReference{*metav1.NewControllerRef(other, corev1.SchemeGroupVersion.WithKind("ReplicationController"))}
	pod := func(ns, name, app string, owned bool, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": app}}}
		if owned {
			p.OwnerReferences = ref
		}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	indexer := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{byController: indexByController})
	a := pod("ns", "a", "web", true, false)
	taken := pod("ns", "taken", "web", false, false)
	taken.OwnerReferences = otherRef
	for _, p := range []*corev1.Pod{a, pod("ns", "orphan", "web", false, false), pod("ns", "relabelled", "other", true, false),
		pod("ns", "relabelled-going", "other", true, true), pod("ns", "someone-else", "other", false, false), pod("other", "b", "web", true, false),
		pod("other", "orphan-elsewhere", "web", false, false), taken} {
		if err := indexer.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadPods(context.Background(), &PodIndex{indexer: indexer}, nil, true, true, owner, labels.SelectorFromSet(labels.Set{"app": "web"}))
	if err != nil {
		t.Fatal(err)
	}
	names := func(ps []*corev1.Pod) map[string]bool {
		out := map[string]bool{}
		for _, p := range ps {
			out[p.Name] = true
		}
		return out
	}
	if m := names(got.Matching); len(m) != 2 || !m["a"] || !m["orphan"] {
		t.Errorf("matching %v, want a and orphan", m)
	}
	if s := names(got.Strays); len(s) != 1 || !s["relabelled"] {
		t.Errorf("strays %v, want relabelled", s)
	}
	for _, p := range got.Matching {
		if p.Name == "a" && p != a {
			t.Error("a copy of the cached pod, want the cached object itself")
		}
	}
}
