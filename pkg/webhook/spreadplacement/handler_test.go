package spreadplacement

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var zoneA = &corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
	{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}

// spreadOver spreads the workload kind/name: subset a holds 2 pods (zone a), b the rest.
func spreadOver(apiVersion, kind, name string) *appsv1alpha1.WorkloadSpread {
	return &appsv1alpha1.WorkloadSpread{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "spread"},
		Spec: appsv1alpha1.WorkloadSpreadSpec{
			TargetReference: &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: apiVersion, Kind: kind, Name: name},
			Subsets: []appsv1alpha1.WorkloadSpreadSubset{
				{Name: "a", RequiredNodeSelectorTerm: zoneA, MaxReplicas: ptr.To(intstr.FromInt32(2))},
				{Name: "b", Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}}}}}
}

func webCloneSet() *appsv1alpha1.CloneSet {
	return &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "cs-uid"},
		Spec: appsv1alpha1.CloneSetSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
}

// podOf is a new pod whose controller is the given owner.
func podOf(name, apiVersion, kind, owner string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner, UID: "owner-uid", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:v1"}}}}
}

type harness struct {
	h *Handler
	// c is the client the handler uses; raw writes around its interceptor, as another writer would.
	c, raw client.Client
	writes atomic.Int32
	// delay holds each status write, so that concurrent admissions pile up behind it.
	delay time.Duration
	// gate, when set, holds every status write of the handler until it is closed.
	gate chan struct{}
}

func newHarness(t *testing.T, conflicts int32, objs ...client.Object) *harness {
	t.Helper()
	scheme, err := kruisescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	hs := &harness{}
	var left atomic.Int32
	left.Store(conflicts)
	raw := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&appsv1alpha1.WorkloadSpread{}).
		WithIndex(&appsv1alpha1.WorkloadSpread{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).
		WithIndex(&appsv1.ReplicaSet{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).Build()
	c := interceptor.NewClient(raw, interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if hs.gate != nil {
			<-hs.gate
		}
		if left.Add(-1) >= 0 {
			return apierrors.NewConflict(schema.GroupResource{Resource: "workloadspreads"}, obj.GetName(), nil)
		}
		hs.writes.Add(1)
		time.Sleep(hs.delay)
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}})
	hs.c, hs.raw = c, raw
	hs.h = &Handler{Reader: c, Live: c, Writer: c, Finder: &workloadfinder.Finder{Reader: c},
		Decoder: admission.NewDecoder(scheme), Clock: clocktesting.NewFakePassiveClock(now)}
	return hs
}

// placedPod is a pod of CloneSet web placed in subset of the spread.
func placedPod(name, subset string) *corev1.Pod {
	pod := podOf(name, "apps.kruise.io/v1alpha1", "CloneSet", "web")
	pod.Annotations = map[string]string{spreadrules.MatchedAnnotation: `{"name":"spread","subset":"` + subset + `"}`}
	return pod
}

// store creates pod in the harness's API server (with a UID) and returns it as stored.
func (hs *harness) store(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	pod = pod.DeepCopy()
	pod.UID = types.UID("uid-" + pod.Name)
	if err := hs.raw.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// deletionOf is the API server's admission request for pod's deletion.
func deletionOf(pod *corev1.Pod) admission.Request {
	raw, _ := json.Marshal(pod)
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Delete, Namespace: pod.Namespace,
		Name: pod.Name, OldObject: runtime.RawExtension{Raw: raw}}}
}

// create admits pod's creation through the spread's entry and returns the pod as admitted.
func (hs *harness) create(t *testing.T, pod *corev1.Pod, dryRun bool) *corev1.Pod {
	t.Helper()
	raw, _ := json.Marshal(pod)
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns",
		Name: pod.Name, Object: runtime.RawExtension{Raw: raw}, DryRun: ptr.To(dryRun)}}
	resp := hs.h.handle(context.Background(), req, "ns/spread")
	if !resp.Allowed {
		t.Fatalf("creation of %s refused: %v", pod.Name, resp.Result)
	}
	out := pod.DeepCopy()
	if len(resp.Patches) > 0 {
		patched, err := json.Marshal(resp.Patches)
		if err != nil {
			t.Fatal(err)
		}
		out = applyPatch(t, raw, patched)
	}
	return out
}

// applyPatch applies a JSON patch to raw and decodes the pod.
func applyPatch(t *testing.T, raw, patch []byte) *corev1.Pod {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(raw)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(out, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func (hs *harness) spread(t *testing.T) *appsv1alpha1.WorkloadSpread {
	t.Helper()
	ws := &appsv1alpha1.WorkloadSpread{}
	if err := hs.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "spread"}, ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

func subsetOf(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	m := spreadrules.MatchedOf(pod)
	if m == nil {
		return ""
	}
	if m.Name != "spread" {
		t.Errorf("%s: annotation names spread %q", pod.Name, m.Name)
	}
	return m.Subset
}

// The first pods fill subset a up to its maxReplicas, the rest go to b; each carries its subset's
// constraints and the annotation, and each admission into the limited subset is recorded.
func TestPlacesPodsInOrder(t *testing.T) {
	hs := newHarness(t, 0, webCloneSet(), spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web"))
	var got []string
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		pod := hs.create(t, podOf(name, "apps.kruise.io/v1alpha1", "CloneSet", "web"), false)
		got = append(got, subsetOf(t, pod))
		switch subsetOf(t, pod) {
		case "a":
			req := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
			if req == nil || req.NodeSelectorTerms[0].MatchExpressions[0].Key != "zone" {
				t.Errorf("%s: no zone affinity: %+v", name, pod.Spec.Affinity)
			}
		case "b":
			if len(pod.Spec.Tolerations) != 1 {
				t.Errorf("%s: tolerations %+v", name, pod.Spec.Tolerations)
			}
		}
		if pod.Annotations[spreadrules.MatchedAnnotation] != `{"name":"spread","subset":"`+subsetOf(t, pod)+`"}` {
			t.Errorf("%s: annotation %q", name, pod.Annotations[spreadrules.MatchedAnnotation])
		}
		// The controller's deletion cost, written at admission: 200 in the first of two subsets, 100 in the second.
		if want := map[string]string{"a": "200", "b": "100"}[subsetOf(t, pod)]; pod.Annotations[spreadrules.DeletionCostAnnotation] != want {
			t.Errorf("%s: deletion cost %q, want %q", name, pod.Annotations[spreadrules.DeletionCostAnnotation], want)
		}
	}
	if want := []string{"a", "a", "b"}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("subsets %v, want %v", got, want)
	}
	st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
	if len(st) != 2 || st[0].MissingReplicas != 0 || len(st[0].CreatingPods) != 2 || st[1].MissingReplicas != -1 || len(st[1].CreatingPods) != 0 {
		t.Errorf("status: %+v", st)
	}
	if hs.writes.Load() != 2 {
		t.Errorf("%d status writes, want 2 (the unlimited subset keeps no books)", hs.writes.Load())
	}
}

// Concurrent creations are decided in arrival order on one copy of the status and written together:
// the quota holds exactly, with fewer writes than placements.
func TestGroupCommit(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(10))
	hs := newHarness(t, 0, webCloneSet(), ws)
	hs.delay = 20 * time.Millisecond
	const n = 20
	subsets := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			raw, _ := json.Marshal(podOf(fmt.Sprintf("web-%d", i), "apps.kruise.io/v1alpha1", "CloneSet", "web"))
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns",
				Name: fmt.Sprintf("web-%d", i), Object: runtime.RawExtension{Raw: raw}}}
			resp := hs.h.handle(context.Background(), req, "ns/spread")
			for _, p := range resp.Patches {
				if m, ok := p.Value.(map[string]any); ok {
					if v, ok := m[spreadrules.MatchedAnnotation].(string); ok {
						subsets[i] = v
					}
				}
				if v, ok := p.Value.(string); ok && strings.HasPrefix(p.Path, "/metadata/annotations/") {
					subsets[i] = v
				}
			}
		})
	}
	wg.Wait()
	inA := 0
	for _, m := range subsets {
		if strings.Contains(m, `"subset":"a"`) {
			inA++
		}
	}
	st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
	if inA != 10 || len(st[0].CreatingPods) != 10 || st[0].MissingReplicas != 0 {
		t.Errorf("%d pods placed in a, status %+v; want 10 (its quota)", inA, st)
	}
	if w := hs.writes.Load(); w >= 10 {
		t.Errorf("%d status writes for 10 placements: not batched", w)
	}
}

// A dry run is placed as a real creation would be, and writes nothing.
func TestDryRunWritesNothing(t *testing.T) {
	hs := newHarness(t, 0, webCloneSet(), spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web"))
	pod := hs.create(t, podOf("web-1", "apps.kruise.io/v1alpha1", "CloneSet", "web"), true)
	if subsetOf(t, pod) != "a" || hs.writes.Load() != 0 || hs.spread(t).Status.VersionedSubsetStatuses != nil {
		t.Errorf("dry run: subset %q, %d writes, status %+v", subsetOf(t, pod), hs.writes.Load(), hs.spread(t).Status)
	}
}

// A conflicting write is decided again on a fresh read.
func TestRetriesOnConflict(t *testing.T) {
	hs := newHarness(t, 2, webCloneSet(), spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web"))
	pod := hs.create(t, podOf("web-1", "apps.kruise.io/v1alpha1", "CloneSet", "web"), false)
	if subsetOf(t, pod) != "a" || len(hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored][0].CreatingPods) != 1 {
		t.Errorf("after conflicts: subset %q, status %+v", subsetOf(t, pod), hs.spread(t).Status)
	}
}

// Pods of another workload, or filtered out, are left as they are.
func TestLeavesOtherPods(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Spec.TargetFilter = &appsv1alpha1.WorkloadSpreadTargetFilter{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "x"}}}
	hs := newHarness(t, 0, webCloneSet(), ws)
	for _, pod := range []*corev1.Pod{podOf("other-1", "apps.kruise.io/v1alpha1", "CloneSet", "other"), podOf("web-1", "apps.kruise.io/v1alpha1", "CloneSet", "web")} {
		if got := hs.create(t, pod, false); subsetOf(t, got) != "" || got.Spec.Affinity != nil {
			t.Errorf("%s placed in %q", pod.Name, subsetOf(t, got))
		}
	}
}

// A Deployment's pod (named by its ReplicaSet, no name yet) is recorded under a generated ID,
// which its annotation carries, in the statuses of its revision.
func TestDeploymentPodsByRevision(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d-uid"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-abc", UID: "owner-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-uid", Controller: ptr.To(true)}}}}
	hs := newHarness(t, 0, d, rs, spreadOver("apps/v1", "Deployment", "web"))
	pod := podOf("", "apps/v1", "ReplicaSet", "web-abc")
	pod.GenerateName = "web-abc-"
	pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = "abc"
	got := hs.create(t, pod, false)
	m := spreadrules.MatchedOf(got)
	if m == nil || m.Subset != "a" || m.UID == "" {
		t.Fatalf("annotation %+v", m)
	}
	st := hs.spread(t).Status.VersionedSubsetStatuses["abc"]
	if len(st) != 2 || st[0].CreatingPods[m.UID].Time.IsZero() {
		t.Errorf("revision abc statuses: %+v", st)
	}
}

// A placed pod's deletion is recorded in deletingPods, with one more replica missing; its dry run
// is not.
func TestRecordsDeletion(t *testing.T) {
	ws := spreadOver("apps.kruise.io/v1alpha1", "CloneSet", "web")
	ws.Status.VersionedSubsetStatuses = map[string][]appsv1alpha1.WorkloadSpreadSubsetStatus{
		spreadrules.VersionIgnored: {{Name: "a", Replicas: 2}, {Name: "b", MissingReplicas: -1}}}
	hs := newHarness(t, 0, webCloneSet(), ws)
	pod := hs.store(t, placedPod("web-1", "a"))
	for _, dry := range []bool{true, false} {
		req := deletionOf(pod)
		req.DryRun = ptr.To(dry)
		if resp := hs.h.handle(context.Background(), req, "ns/spread"); !resp.Allowed {
			t.Fatalf("deletion refused: %v", resp.Result)
		}
		st := hs.spread(t).Status.VersionedSubsetStatuses[spreadrules.VersionIgnored][0]
		if dry && len(st.DeletingPods) != 0 {
			t.Errorf("dry run recorded: %+v", st)
		}
		if !dry && (st.MissingReplicas != 1 || st.DeletingPods["web-1"].Time.IsZero()) {
			t.Errorf("deletion: %+v", st)
		}
	}
}

// A Deployment's new ReplicaSet creates pods before the manager's cache shows it: the webhook
// reads it from the API server and places the pods all the same.
func TestNewReplicaSetReadLive(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d-uid"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-new", UID: "owner-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-uid", Controller: ptr.To(true)}}}}
	spread := spreadOver("apps/v1", "Deployment", "web")
	live := newHarness(t, 0, d, rs, spread)
	hs := newHarness(t, 0, d.DeepCopy(), spread.DeepCopy()) // the cache: no ReplicaSet yet
	hs.h.Live = live.c
	pod := podOf("", "apps/v1", "ReplicaSet", "web-new")
	pod.GenerateName = "web-new-"
	if got := hs.create(t, pod, false); subsetOf(t, got) != "a" {
		t.Errorf("placed in %q, want a", subsetOf(t, got))
	}
}
