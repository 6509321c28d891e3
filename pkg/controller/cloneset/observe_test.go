package cloneset

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/core/revision"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
)

// What observe reads from objects OpenKruise left: a Failed (evicted) pod is no replica but keeps
// its instance ID (its claims are not free); a pod labelled with the short hash
// (CloneSetShortHash) is at the revision of that hash; an orphan that matches is to adopt, and one
// a CloneSet of this template made (deleted with propagation Orphan, created again) counts at once.
func TestObserveTakesOverOpenKruisePods(t *testing.T) {
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "cs-uid"},
		Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}}}
	rev, err := revision.New(cs, gvk, revision.Input{Template: &cs.Spec.Template}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	owned := []metav1.OwnerReference{*metav1.NewControllerRef(cs, gvk)}
	pod := func(name, id, label string, phase corev1.PodPhase, owners []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: owners,
			Labels: map[string]string{"app": "web", v1alpha1.CloneSetInstanceIDLabelKey: id, inplace.RevisionLabel: label}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-web-gone", OwnerReferences: owned,
		Labels: map[string]string{"app": "web", v1alpha1.CloneSetInstanceIDLabelKey: "gone"}}}
	objs := []client.Object{cs, rev, claim,
		pod("web-a", "a", rev.Name, corev1.PodRunning, owned),
		pod("web-b", "b", revision.ShortHash(rev.Name), corev1.PodRunning, owned),
		pod("web-c", "c", rev.Name, corev1.PodRunning, owned),
		pod("web-gone", "gone", rev.Name, corev1.PodFailed, owned),
		pod("stray", "", "", corev1.PodRunning, nil),
		pod("web-d", "d", rev.Name, corev1.PodRunning, nil)}
	scheme := testScheme(t)
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	r := &Reconciler{Base: workloadloop.Base{Client: c, Engine: engine.New(c, nil, inplace.Options{})}}
	obs, err := r.observe(context.Background(), cs, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range obs.snap.Pods {
		names = append(names, p.Name)
		if p.Revision != rev.Name {
			t.Errorf("pod %s at revision %q, want %s", p.Name, p.Revision, rev.Name)
		}
	}
	if len(names) != 4 || obs.snap.UpdateRevision != rev.Name || obs.newRevision != nil {
		t.Errorf("pods %v, update revision %s (new %v); want the 3 running pods and the predecessor's at OpenKruise's revision %s", names,
			obs.snap.UpdateRevision, obs.newRevision != nil, rev.Name)
	}
	if len(obs.snap.FreeInstanceIDs) != 0 || len(obs.inactive) != 1 {
		t.Errorf("free instance IDs %v, inactive %d: the Failed pod's claims are not free", obs.snap.FreeInstanceIDs, len(obs.inactive))
	}
	if len(obs.adopt) != 2 || obs.adopt[0].Name != "stray" || obs.adopt[1].Name != "web-d" {
		t.Errorf("to adopt: %v, want the matching orphans", obs.adopt)
	}
}

// A CloneSet created again under its name while its predecessor (deleted with propagation Orphan)
// still holds pods its selector matches makes no pod until the garbage collector releases them:
// it would make as many again (the soak, seed 3).
func TestObserveWaitsForThePredecessorsPods(t *testing.T) {
	cs := &v1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "new"},
		Spec: v1alpha1.CloneSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}}}
	old := cs.DeepCopy()
	old.UID = "old"
	held := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-a", Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(old, gvk)}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cs, held).Build()
	r := &Reconciler{Base: workloadloop.Base{Client: c, Engine: engine.New(c, nil, inplace.Options{})}}
	_, err := r.observe(context.Background(), cs, false)
	var pe *podcontrol.PredecessorError
	if !errors.As(err, &pe) || pe.What != "pods" {
		t.Fatalf("observe: %v, want a PredecessorError on pods", err)
	}
	held.OwnerReferences = nil
	if err := c.Update(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	if _, err := r.observe(context.Background(), cs, false); err != nil {
		t.Fatalf("observe once released: %v", err)
	}
}

// Orphans of this template count at once even when their revision is gone (the garbage collector
// deleted it with the predecessor) and is the update revision to create again under its name:
// the CloneSet created as many pods again, then deleted them (the soak, seed 3, in CI).
func TestObserveCountsOrphansOfTheRevisionToCreate(t *testing.T) {
	cs, rev := webAndRevision(t, 2)
	orphan := func(name, id, label string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels: map[string]string{"app": "web", v1alpha1.CloneSetInstanceIDLabelKey: id, inplace.RevisionLabel: label}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cs, // not rev: it is to create
		orphan("web-a", "a", rev.Name), orphan("web-b", "b", revision.ShortHash(rev.Name)), orphan("web-c", "c", "web-gone")).Build()
	r := &Reconciler{Base: workloadloop.Base{Client: c, Engine: engine.New(c, nil, inplace.Options{})}}
	obs, err := r.observe(context.Background(), cs, false)
	if err != nil {
		t.Fatal(err)
	}
	if obs.newRevision == nil || obs.snap.UpdateRevision != rev.Name {
		t.Fatalf("update revision %s (to create: %v), want %s to create", obs.snap.UpdateRevision, obs.newRevision != nil, rev.Name)
	}
	var got []string
	for _, p := range obs.snap.Pods {
		got = append(got, p.Name+"@"+p.Revision)
	}
	if want := []string{"web-a@" + rev.Name, "web-b@" + rev.Name}; !slices.Equal(got, want) {
		t.Errorf("replicas %v, want %v: the orphans of the revision to create count; one of an unknown revision does not", got, want)
	}
}
