package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/webhook/topologypin"
	"github.com/kruise-ng/kruise/test/harness"
)

// Issue 39, the other kinds with entries of their own: each is enforced for the requests made
// right after its create returned, as a user applying it with the rest of an application gets.

func budgetObject(ns, name string, sel map[string]string) *policyv1alpha1.PodUnavailableBudget {
	return &policyv1alpha1.PodUnavailableBudget{TypeMeta: metav1.TypeMeta{APIVersion: policyv1alpha1.GroupVersion.String(), Kind: "PodUnavailableBudget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel},
			MaxUnavailable: ptr.To(intstr.FromInt32(0))}}
}

// A budget with maxUnavailable 0 applied over a CloneSet's ready pods refuses an eviction and a
// deletion of one made at once, every time; so does a budget applied in one file with the
// CloneSet it targets.
func TestBudgetAppliedGuardsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	guarded := harness.NewCloneSet(ns, "guarded", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, podSpec("registry.example/app:v1"))
	if err := c.Create(ctx, guarded); err != nil {
		t.Fatal(err)
	}
	waitCloneSet(t, c, ns, "guarded", "2 ready", harness.RolledOut(2))
	var victim string
	for name := range podsByName(t, ns, "app=guarded") {
		victim = name
	}
	dryRun := []string{metav1.DryRunAll}
	const runs = 20
	var evicted, deleted []string
	for i := range runs {
		name := fmt.Sprintf("b%d", i)
		kubectlApply(t, manifest(t, budgetObject(ns, name, map[string]string{"app": "guarded"})))
		err := cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim},
			DeleteOptions: &metav1.DeleteOptions{DryRun: dryRun}})
		if !apierrors.IsTooManyRequests(err) {
			evicted = append(evicted, fmt.Sprintf("%s: %v", name, err))
		}
		err = cs.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{DryRun: dryRun})
		if !apierrors.IsForbidden(err) {
			deleted = append(deleted, fmt.Sprintf("%s: %v", name, err))
		}
		if err := c.Delete(ctx, budgetObject(ns, name, nil)); err != nil {
			t.Fatal(err)
		}
	}
	tally(t, "budget applied, then an eviction at once: refused", runs, evicted)
	tally(t, "budget applied, then a deletion at once: refused", runs, deleted)

	// A budget applied before the CloneSet it targets, in one file.
	cloneSet := harness.NewCloneSet(ns, "web", 2, appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, podSpec("registry.example/app:v1"))
	cloneSet.TypeMeta = metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet"}
	pub := budgetObject(ns, "web", nil)
	pub.Spec.Selector = nil
	pub.Spec.TargetReference = &policyv1alpha1.PodUnavailableBudgetTargetReference{APIVersion: "apps.kruise.io/v1alpha1", Kind: "CloneSet", Name: "web"}
	kubectlApply(t, manifest(t, pub, cloneSet))
	waitCloneSet(t, c, ns, "web", "2 ready", harness.RolledOut(2))
	for name := range podsByName(t, ns, "app=web") {
		err := cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			DeleteOptions: &metav1.DeleteOptions{DryRun: dryRun}})
		if !apierrors.IsTooManyRequests(err) {
			t.Errorf("eviction of %s, guarded by a budget applied with its CloneSet: %v; want 429", name, err)
		}
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{DryRun: dryRun}); !apierrors.IsForbidden(err) {
			t.Errorf("deletion of %s, guarded by a budget applied with its CloneSet: %v; want 403", name, err)
		}
	}
}

// A WorkloadSpread applied in one file before the Deployment or the CloneSet it spreads places
// every pod of it.
func TestWorkloadSpreadAppliedWithItsWorkload(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	zones := zonedNodes(t, ns, "a", "b")
	const runs, replicas = 5, 3
	total, unplaced := 0, []string{}
	for i := range runs {
		for _, kind := range []string{"Deployment", "CloneSet"} {
			name := fmt.Sprintf("%s%d", map[string]string{"Deployment": "dep", "CloneSet": "cs"}[kind], i)
			spread := newSpread(ns, name, 1)
			spread.TypeMeta = metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "WorkloadSpread"}
			tmpl := spreadCloneSet(ns, name).Spec.Template
			var workload runtime.Object
			if kind == "Deployment" {
				spread.Spec.TargetReference = &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
				workload = &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
					Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: tmpl}}
			} else {
				set := harness.NewCloneSet(ns, name, replicas, appsv1alpha1.RecreateCloneSetUpdateStrategyType, tmpl.Spec)
				set.TypeMeta = metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "CloneSet"}
				workload = set
			}
			kubectlApply(t, manifest(t, spread, workload))
			var pods map[string]*corev1.Pod
			harness.Eventually(t, 60*time.Second, kind+" "+name+" creates its pods", func() (bool, string) {
				pods = podsByName(t, ns, "app="+name)
				return len(pods) == replicas, fmt.Sprintf("%d pods", len(pods))
			})
			for _, p := range pods {
				total++
				if subsetOf(p) == "" {
					unplaced = append(unplaced, p.Name)
				}
			}
			count, wrong := bySubset(t, ns, name, zones)
			if len(wrong) > 0 || count["a"] > 1 {
				t.Errorf("%s %s: pods by subset %v, off their subset %v", kind, name, count, wrong)
			}
		}
	}
	tally(t, "WorkloadSpread applied with its workload: pods placed", total, unplaced)
}

// A PersistentPodState applied in one file with its StatefulSet has its entry from the moment its
// create returns: the pod recreated once its state is recorded comes back in its recorded zone,
// with no wait for a registrar.
func TestPersistentPodStateAppliedWithItsStatefulSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := ppsZonedNodes(t, ns)
	set := ppsStatefulSet(ns, "kv", 2)
	set.TypeMeta = metav1.TypeMeta{APIVersion: appsv1beta1.GroupVersion.String(), Kind: "StatefulSet"}
	pps := &appsv1alpha1.PersistentPodState{TypeMeta: metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "PersistentPodState"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kv"},
		Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "kv"},
			RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{ppsZoneLabel}}}}
	kubectlApply(t, manifest(t, pps, set))
	recorded := waitPersistentPodState(t, c, ns, "kv", "records the 2 pods", func(p *appsv1alpha1.PersistentPodState) bool {
		return len(p.Status.PodStates) == 2
	})
	old := podsByName(t, ns, "app=kv")["kv-0"]
	want := recorded.Status.PodStates["kv-0"].NodeTopologyLabels[ppsZoneLabel]
	if err := c.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	var back *corev1.Pod
	harness.Eventually(t, 60*time.Second, "kv-0 recreated", func() (bool, string) {
		back = podsByName(t, ns, "app=kv")["kv-0"]
		if back == nil || back.UID == old.UID || back.Spec.NodeName == "" {
			return false, "not recreated and scheduled yet"
		}
		return true, ""
	})
	if back.Spec.NodeSelector[ppsZoneLabel] != want || back.Annotations[topologypin.InjectedAnnotation] != "kv" || zones[back.Spec.NodeName] != want {
		t.Errorf("recreated kv-0: nodeSelector %v, annotations %v, zone %s; want %s=%s", back.Spec.NodeSelector, back.Annotations,
			zones[back.Spec.NodeName], ppsZoneLabel, want)
	}
}

// Deletion protection needs no registration (its entries select the label itself): an object
// applied with delete-protection Always is refused its deletion at once, every time.
func TestDeletionProtectionAppliedGuardsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	const runs = 20
	var deleted []string
	for i := range runs {
		svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("s%d", i), Labels: protected(policyv1alpha1.DeletionProtectionTypeAlways)},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		kubectlApply(t, manifest(t, svc))
		if err := cs.CoreV1().Services(ns).Delete(ctx, svc.Name, dryRun); !apierrors.IsForbidden(err) {
			deleted = append(deleted, fmt.Sprintf("%s: %v", svc.Name, err))
		}
		if _, err := cs.CoreV1().Services(ns).Patch(ctx, svc.Name, "application/merge-patch+json",
			[]byte(`{"metadata":{"labels":{"`+protection+`":null}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tally(t, "protected Service applied, then deleted at once: refused", runs, deleted)
}

// A WorkloadSpread whose targetFilter is widened, applied in one file with a scale-up of its
// Deployment, places every pod the scale-up creates.
func TestWorkloadSpreadWidenedWithAScaleUp(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	zonedNodes(t, ns, "a", "b")
	tmpl := spreadCloneSet(ns, "wide").Spec.Template
	tmpl.Labels["tier"] = "b"
	deployment := func(replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wide"},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wide"}}, Template: tmpl}}
	}
	spread := func(tiers ...string) *appsv1alpha1.WorkloadSpread {
		s := newSpread(ns, "wide", 1)
		s.TypeMeta = metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "WorkloadSpread"}
		s.Spec.TargetReference = &appsv1alpha1.WorkloadSpreadTargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "wide"}
		s.Spec.TargetFilter = &appsv1alpha1.WorkloadSpreadTargetFilter{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: tiers}}}}
		return s
	}
	kubectlApply(t, manifest(t, spread("a"), deployment(1)))
	var before map[string]*corev1.Pod
	harness.Eventually(t, 60*time.Second, "the first pod", func() (bool, string) {
		before = podsByName(t, ns, "app=wide")
		return len(before) == 1, fmt.Sprintf("%d pods", len(before))
	})
	for _, p := range before {
		if subsetOf(p) != "" {
			t.Fatalf("pod %s, which the targetFilter leaves out, was placed in %s", p.Name, subsetOf(p))
		}
	}
	kubectlApply(t, manifest(t, spread("a", "b"), deployment(4)))
	var pods map[string]*corev1.Pod
	harness.Eventually(t, 60*time.Second, "the scale-up's pods", func() (bool, string) {
		pods = podsByName(t, ns, "app=wide")
		return len(pods) == 4, fmt.Sprintf("%d pods", len(pods))
	})
	for name, p := range pods {
		if _, old := before[name]; !old && subsetOf(p) == "" {
			t.Errorf("pod %s, created after the targetFilter was widened to it, was not placed", name)
		}
	}
}
