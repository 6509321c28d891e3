package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/test/harness"
)

// observation is one status a watch showed.
type observation struct {
	generation, observed int64
	revision             string // the update revision (or v1alpha1 DaemonSet's daemonSetHash)
	updated              int64
}

// statusWatch records every status of one object a watch of version gvr shows; revisionField and
// updatedField name the status fields that must belong to observedGeneration.
type statusWatch struct {
	mu  sync.Mutex
	obs []observation
}

func watchStatus(t *testing.T, gvr schema.GroupVersionResource, ns, name, revisionField, updatedField string) *statusWatch {
	t.Helper()
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	var res dynamic.ResourceInterface = dynamic.NewForConfigOrDie(cfg).Resource(gvr)
	if ns != "" { // "" for a cluster-scoped kind
		res = dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(ns)
	}
	w, err := res.Watch(context.Background(), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	sw := &statusWatch{}
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			rev, _, _ := unstructured.NestedString(u.Object, append([]string{"status"}, strings.Split(revisionField, ".")...)...)
			updated, _, _ := unstructured.NestedInt64(u.Object, "status", updatedField)
			sw.mu.Lock()
			sw.obs = append(sw.obs, observation{generation: u.GetGeneration(), observed: observed, revision: rev, updated: updated})
			sw.mu.Unlock()
		}
	}()
	return sw
}

// check fails when a status claims generation gen (observedGeneration) with a revision other than
// rev, or, in its first such status, counts more than firstUpdated pods as updated: a status is one
// observation of one generation.
func (sw *statusWatch) check(t *testing.T, what string, gen int64, rev string, firstUpdated int64) {
	t.Helper()
	// The watch shows the final status after the read that saw it.
	harness.Eventually(t, 10*time.Second, what+": the final status in the watch", func() (bool, string) {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		for _, o := range sw.obs {
			if o.observed == gen && o.revision == rev {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d statuses", len(sw.obs))
	})
	sw.mu.Lock()
	defer sw.mu.Unlock()
	first := true
	seen := 0
	for _, o := range sw.obs {
		if o.observed != gen {
			continue
		}
		seen++
		if o.revision != rev {
			t.Errorf("%s: a status of observedGeneration %d has revision %q, want %q (generation %d's)", what, gen, o.revision, rev, gen)
		}
		if first && o.updated > firstUpdated {
			t.Errorf("%s: the first status of observedGeneration %d counts %d updated pods, at most %d can be", what, gen, o.updated, firstUpdated)
		}
		first = false
	}
	if seen == 0 {
		t.Errorf("%s: no status of observedGeneration %d seen (%d statuses)", what, gen, len(sw.obs))
	}
}

var (
	cloneSetsV1alpha1     = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}
	statefulSetsV1alpha1  = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "statefulsets"}
	statefulSetsV1beta1   = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1beta1", Resource: "statefulsets"}
	daemonSetsV1alpha1    = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "daemonsets"}
	daemonSetsV1beta1     = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1beta1", Resource: "daemonsets"}
	sidecarSetsV1alpha1   = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "sidecarsets"}
	sidecarSetsV1beta1    = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1beta1", Resource: "sidecarsets"}
	unitedDeployments     = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "uniteddeployments"}
	podUnavailableBudgets = schema.GroupVersionResource{Group: "policy.kruise.io", Version: "v1alpha1", Resource: "podunavailablebudgets"}
)

// counted fails when a status of observedGeneration gen counts other than want in the watch's
// counter field, for kinds with no revision: their counters are what belongs to the generation.
func (sw *statusWatch) counted(t *testing.T, what string, gen, want int64) {
	t.Helper()
	harness.Eventually(t, 10*time.Second, what+": the final status in the watch", func() (bool, string) {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		for _, o := range sw.obs {
			if o.observed == gen && o.updated == want {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d statuses", len(sw.obs))
	})
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for _, o := range sw.obs {
		if o.observed == gen && o.updated != want {
			t.Errorf("%s: a status of observedGeneration %d counts %d, want %d (generation %d's)", what, gen, o.updated, want, gen)
		}
	}
}

// Every status a workload writes is one observation: once observedGeneration names the new
// generation, the update revision (v1alpha1 DaemonSet: daemonSetHash) is that generation's and the
// counters count its pods — read through both served versions, during a rollout of each kind
// (the DaemonSet's recreating, under a preDelete hook, as in the trap OpenKruise's own tests hit).
func TestStatusIsOneObservation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)

	t.Run("CloneSet", func(t *testing.T) {
		clone := newCloneSet(ns, "obs-cs", 3, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType)
		if err := c.Create(ctx, clone); err != nil {
			t.Fatal(err)
		}
		waitCloneSet(t, c, ns, "obs-cs", "3 updated", func(s *appsv1alpha1.CloneSet) bool { return s.Status.UpdatedReadyReplicas == 3 })
		sw := watchStatus(t, cloneSetsV1alpha1, ns, "obs-cs", "updateRevision", "updatedReplicas")
		patchCloneSet(t, c, clone, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
		done := waitCloneSet(t, c, ns, "obs-cs", "rolled out", func(s *appsv1alpha1.CloneSet) bool {
			return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReadyReplicas == 3 && s.Status.UpdateRevision == s.Status.CurrentRevision
		})
		sw.check(t, "CloneSet", done.Generation, done.Status.UpdateRevision, 2)
	})

	t.Run("StatefulSet", func(t *testing.T) {
		set := newStatefulSet(ns, "obs-sts", 3, "Parallel")
		if err := c.Create(ctx, set); err != nil {
			t.Fatal(err)
		}
		waitStatefulSet(t, c, ns, "obs-sts", "3 ready", func(s *appsv1beta1.StatefulSet) bool {
			return s.Status.ReadyReplicas == 3 && s.Status.UpdatedReplicas == 3
		})
		beta := watchStatus(t, statefulSetsV1beta1, ns, "obs-sts", "updateRevision", "updatedReplicas")
		alpha := watchStatus(t, statefulSetsV1alpha1, ns, "obs-sts", "updateRevision", "updatedReplicas")
		patchStatefulSet(t, c, set, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/app:v2"}]}}}}`)
		done := waitStatefulSet(t, c, ns, "obs-sts", "rolled out", func(s *appsv1beta1.StatefulSet) bool {
			return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReplicas == 3 && s.Status.ReadyReplicas == 3
		})
		beta.check(t, "StatefulSet v1beta1", done.Generation, done.Status.UpdateRevision, 2)
		alpha.check(t, "StatefulSet v1alpha1", done.Generation, done.Status.UpdateRevision, 2)
	})

	t.Run("SidecarSet", func(t *testing.T) {
		set := createSidecarSet(t, c, newSidecarSet("obs-"+ns, ns, "obs-sc", corev1.Container{Name: "agent", Image: "registry.example/agent:v1"}, ""))
		for i := range 3 {
			svCreatePod(t, ns, fmt.Sprintf("obs-sc-%d", i), map[string]string{"app": "obs-sc"}, nil)
		}
		svWaitReady(t, ns, "app=obs-sc", 3)
		waitSidecarSet(t, c, set.Name, "counts its pods", func(s *appsv1beta1.SidecarSet) bool { return s.Status.UpdatedReadyPods == 3 })
		beta := watchStatus(t, sidecarSetsV1beta1, "", set.Name, "latestRevision", "updatedPods")
		alpha := watchStatus(t, sidecarSetsV1alpha1, "", set.Name, "latestRevision", "updatedPods")
		svPatch(t, c, set, `{"spec":{"containers":[{"name":"agent","image":"registry.example/agent:v2"}],"updateStrategy":{"maxUnavailable":1}}}`)
		done := waitSidecarSet(t, c, set.Name, "upgraded its pods", func(s *appsv1beta1.SidecarSet) bool {
			return s.Status.ObservedGeneration == s.Generation && s.Status.UpdatedReadyPods == 3
		})
		beta.check(t, "SidecarSet v1beta1", done.Generation, done.Status.LatestRevision, 1)
		alpha.check(t, "SidecarSet v1alpha1", done.Generation, done.Status.LatestRevision, 1)
	})

	t.Run("DaemonSet", func(t *testing.T) {
		nodes := privateNodes(t, ns, 2)
		ds := newDaemonSet(ns, "obs-ds")
		ds.Spec.Lifecycle = &appspub.Lifecycle{PreDelete: &appspub.LifecycleHook{LabelsHandler: map[string]string{"e2e.kruise.io/hold": "true"}}}
		ds.Spec.Template.Labels["e2e.kruise.io/hold"] = "true"
		ds.Spec.UpdateStrategy = appsv1beta1.DaemonSetUpdateStrategy{Type: appsv1beta1.DaemonSetRollingUpdateStrategyType,
			RollingUpdate: &appsv1beta1.DaemonSetRollingUpdate{Type: appsv1beta1.DaemonSetStandardRollingUpdateType}}
		if err := c.Create(ctx, ds); err != nil {
			t.Fatal(err)
		}
		onNodes(t, ns, "obs-ds", nodes...)
		beta := watchStatus(t, daemonSetsV1beta1, ns, "obs-ds", "updateRevision", "updatedNumberScheduled")
		alpha := watchStatus(t, daemonSetsV1alpha1, ns, "obs-ds", "daemonSetHash", "updatedNumberScheduled")
		if err := c.Patch(ctx, ds, client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/agent:v2"}]}}}}`))); err != nil {
			t.Fatal(err)
		}
		// The old pods wait in PreparingDelete for this test, as the hook's controller, to let them go.
		harness.Eventually(t, 60*time.Second, "the old pods released and replaced", func() (bool, string) {
			pods := podsByName(t, ns, "app=obs-ds")
			for _, p := range pods {
				if p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStatePreparingDelete) && p.Labels["e2e.kruise.io/hold"] == "true" {
					_, _ = cs.CoreV1().Pods(ns).Patch(ctx, p.Name, "application/merge-patch+json",
						[]byte(`{"metadata":{"labels":{"e2e.kruise.io/hold":null}}}`), metav1.PatchOptions{})
				}
			}
			got := &appsv1beta1.DaemonSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(ds), got); err != nil {
				return false, err.Error()
			}
			st := got.Status
			return st.ObservedGeneration == got.Generation && st.UpdatedNumberScheduled == 2 && st.NumberAvailable == 2, fmt.Sprintf("%+v", st)
		})
		done := &appsv1beta1.DaemonSet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(ds), done); err != nil {
			t.Fatal(err)
		}
		beta.check(t, "DaemonSet v1beta1", done.Generation, done.Status.UpdateRevision, 1)
		alpha.check(t, "DaemonSet v1alpha1", done.Generation, done.Status.UpdateRevision, 1)
		// The hash names the new pods' revision.
		for _, p := range podsByName(t, ns, "app=obs-ds") {
			if p.DeletionTimestamp == nil && p.Labels["controller-revision-hash"] != done.Status.UpdateRevision {
				t.Errorf("pod %s: controller-revision-hash %q, status %q", p.Name, p.Labels["controller-revision-hash"], done.Status.UpdateRevision)
			}
		}
	})

	// A budget has no revision: its desiredAvailable belongs to the generation that set maxUnavailable.
	t.Run("PodUnavailableBudget", func(t *testing.T) {
		for i := range 4 {
			svCreatePod(t, ns, fmt.Sprintf("obs-pub-%d", i), map[string]string{"app": "obs-pub"}, nil)
		}
		svWaitReady(t, ns, "app=obs-pub", 4)
		pub := maxOneBudget(ns, "obs-pub", "obs-pub", 4)
		if err := c.Create(ctx, pub); err != nil {
			t.Fatal(err)
		}
		waitBudget(t, c, ns, "obs-pub", "counts 4", func(p *policyv1alpha1.PodUnavailableBudget) bool { return p.Status.DesiredAvailable == 3 })
		sw := watchStatus(t, podUnavailableBudgets, ns, "obs-pub", "", "desiredAvailable")
		if err := c.Patch(ctx, pub, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"maxUnavailable":2}}`))); err != nil {
			t.Fatal(err)
		}
		done := waitBudget(t, c, ns, "obs-pub", "lets two out", func(p *policyv1alpha1.PodUnavailableBudget) bool { return p.Status.DesiredAvailable == 2 })
		sw.counted(t, "PodUnavailableBudget", done.Generation, 2)
	})

	// Last: its zoned nodes are private nodes of the namespace, which the DaemonSet would run on.
	t.Run("UnitedDeployment", func(t *testing.T) {
		zonedNodes(t, ns, "a", "b")
		ud := newUnitedDeployment(ns, "obs-ud", 4, cloneSetTemplate, udSubset("a", nil), udSubset("b", nil))
		if err := c.Create(ctx, ud); err != nil {
			t.Fatal(err)
		}
		waitUD := func(what string, cond func(*appsv1alpha1.UnitedDeployment) bool) *appsv1alpha1.UnitedDeployment {
			got := &appsv1alpha1.UnitedDeployment{}
			harness.Eventually(t, 90*time.Second, "UnitedDeployment "+what, func() (bool, string) {
				if err := c.Get(ctx, client.ObjectKeyFromObject(ud), got); err != nil {
					return false, err.Error()
				}
				return cond(got), fmt.Sprintf("%+v", got.Status)
			})
			return got
		}
		waitUD("4 updated and ready", func(u *appsv1alpha1.UnitedDeployment) bool { return u.Status.UpdatedReadyReplicas == 4 })
		sw := watchStatus(t, unitedDeployments, ns, "obs-ud", "updateStatus.updatedRevision", "updatedReplicas")
		if err := c.Patch(ctx, ud, client.RawPatch("application/merge-patch+json",
			[]byte(`{"spec":{"template":{"cloneSetTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/web:v2"}]}}}}}}}`))); err != nil {
			t.Fatal(err)
		}
		done := waitUD("rolled out", func(u *appsv1alpha1.UnitedDeployment) bool {
			return u.Status.ObservedGeneration == u.Generation && u.Status.UpdatedReadyReplicas == 4 && u.Status.UpdateStatus != nil &&
				u.Status.CurrentRevision == u.Status.UpdateStatus.UpdatedRevision
		})
		sw.check(t, "UnitedDeployment", done.Generation, done.Status.UpdateStatus.UpdatedRevision, 3)
	})
}
