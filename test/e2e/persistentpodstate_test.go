package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	ppsctl "github.com/kruise-ng/kruise/pkg/controller/persistentpodstate"
	"github.com/kruise-ng/kruise/pkg/install"
	ppswebhook "github.com/kruise-ng/kruise/pkg/webhook/persistentpodstate"
	"github.com/kruise-ng/kruise/test/harness"
)

const ppsZoneLabel = corev1.LabelTopologyZone

// ppsZonedNodes creates three private nodes, each in a zone of its own: node name → zone.
func ppsZonedNodes(t *testing.T, ns string) map[string]string {
	t.Helper()
	zones := map[string]string{}
	for i, name := range privateNodes(t, ns, 3) {
		zone := fmt.Sprintf("zone-%c", 'a'+i)
		patchNode(t, name, fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, ppsZoneLabel, zone))
		zones[name] = zone
	}
	return zones
}

// ppsStatefulSet is an Advanced StatefulSet whose pods run on the namespace's private nodes.
func ppsStatefulSet(ns, name string, replicas int32) *appsv1beta1.StatefulSet {
	set := newStatefulSet(ns, name, replicas, appsv1.ParallelPodManagement)
	set.Spec.Template.Spec.NodeSelector = map[string]string{"e2e.kruise.io/ns": ns}
	set.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: privateTaint, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
	return set
}

func waitPersistentPodState(t *testing.T, c client.Client, ns, name, what string, cond func(*appsv1alpha1.PersistentPodState) bool) *appsv1alpha1.PersistentPodState {
	t.Helper()
	got := &appsv1alpha1.PersistentPodState{}
	harness.Eventually(t, 60*time.Second, "PersistentPodState "+name+" "+what, func() (bool, string) {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, got); err != nil {
			return false, err.Error()
		}
		return got.Status.ObservedGeneration == got.Generation && cond(got), fmt.Sprintf("generation %d, status %+v", got.Generation, got.Status)
	})
	return got
}

// A PersistentPodState over an Advanced StatefulSet records the zone of each ready pod; a deleted
// pod comes back with a node selector on its recorded zone, through its own webhook entry; a
// scale-in drops the states of the ordinals removed (retention WhenScaled).
func TestPersistentPodStateKeepsZones(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := ppsZonedNodes(t, ns)
	set := ppsStatefulSet(ns, "db", 3)
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "db", "3 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 3 })
	pps := &appsv1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: "db"},
			RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{ppsZoneLabel}}}}
	if err := c.Create(ctx, pps); err != nil {
		t.Fatal(err)
	}
	recorded := waitPersistentPodState(t, c, ns, "db", "records the 3 pods", func(p *appsv1alpha1.PersistentPodState) bool {
		return len(p.Status.PodStates) == 3
	})
	pods := podsByName(t, ns, "app=db")
	for name, state := range recorded.Status.PodStates {
		p := pods[name]
		if p == nil || state.NodeName != p.Spec.NodeName || len(state.NodeTopologyLabels) != 1 || state.NodeTopologyLabels[ppsZoneLabel] != zones[p.Spec.NodeName] {
			t.Errorf("state of %s: %+v; the pod runs on %v", name, state, p)
		}
	}

	// The entry that calls Kruise for this workload's pods is registered before a pod is recreated.
	entry := ppswebhook.EntryName(ns, "db")
	harness.Eventually(t, 30*time.Second, "entry "+entry+" registered", func() (bool, string) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: install.PersistentPodStateConfiguration}, cfg); err != nil {
			return false, err.Error()
		}
		var names []string
		for _, w := range cfg.Webhooks {
			names = append(names, w.Name)
		}
		return slices.Contains(names, entry), fmt.Sprint(names)
	})

	old := pods["db-1"]
	want := recorded.Status.PodStates["db-1"].NodeTopologyLabels[ppsZoneLabel]
	if err := c.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	var back *corev1.Pod
	harness.Eventually(t, 60*time.Second, "db-1 recreated and ready", func() (bool, string) {
		back = podsByName(t, ns, "app=db")["db-1"]
		if back == nil || back.UID == old.UID {
			return false, "not recreated yet"
		}
		return condition(back, corev1.PodReady) == corev1.ConditionTrue, describe(back)
	})
	if back.Spec.NodeSelector[ppsZoneLabel] != want || back.Annotations[ppswebhook.InjectedAnnotation] != "db" {
		t.Errorf("recreated db-1: nodeSelector %v, annotations %v; want %s=%s and %s=db", back.Spec.NodeSelector, back.Annotations,
			ppsZoneLabel, want, ppswebhook.InjectedAnnotation)
	}
	if got := zones[back.Spec.NodeName]; got != want {
		t.Errorf("recreated db-1 runs on %s in %s, want zone %s", back.Spec.NodeName, got, want)
	}

	// Retention WhenScaled (the default): the state of the ordinal scaled away is dropped.
	patchStatefulSet(t, c, set, `{"spec":{"replicas":2}}`)
	waitPersistentPodState(t, c, ns, "db", "drops db-2", func(p *appsv1alpha1.PersistentPodState) bool {
		_, has0 := p.Status.PodStates["db-0"]
		_, has1 := p.Status.PodStates["db-1"]
		_, has2 := p.Status.PodStates["db-2"]
		return has0 && has1 && !has2
	})
}

// A StatefulSet annotated as OpenKruise documents gets a PersistentPodState of its name, owned by
// it, that follows its annotations and goes away when it is no longer asked for.
func TestPersistentPodStateAutoGenerated(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	set := ppsStatefulSet(ns, "auto", 1)
	set.Annotations = map[string]string{ppsctl.AutoGenerateAnnotation: "true", ppsctl.RequiredTopologyAnnotation: ppsZoneLabel}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	generated := waitPersistentPodState(t, c, ns, "auto", "generated", func(p *appsv1alpha1.PersistentPodState) bool { return true })
	ref := metav1.GetControllerOf(generated)
	if ref == nil || ref.UID != set.UID || ref.Kind != "StatefulSet" || ref.APIVersion != "apps.kruise.io/v1beta1" {
		t.Errorf("generated PersistentPodState's controller %+v, want the StatefulSet %s", ref, set.UID)
	}
	if s := generated.Spec; s.TargetReference.Name != "auto" || s.RequiredPersistentTopology == nil ||
		!slices.Equal(s.RequiredPersistentTopology.NodeTopologyKeys, []string{ppsZoneLabel}) || len(s.PreferredPersistentTopology) != 0 {
		t.Errorf("generated spec %+v", s)
	}

	patchStatefulSet(t, c, set, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ppsctl.PreferredTopologyAnnotation, corev1.LabelHostname))
	waitPersistentPodState(t, c, ns, "auto", "follows the annotations", func(p *appsv1alpha1.PersistentPodState) bool {
		pref := p.Spec.PreferredPersistentTopology
		return len(pref) == 1 && pref[0].Weight == 100 && slices.Equal(pref[0].Preference.NodeTopologyKeys, []string{corev1.LabelHostname})
	})

	patchStatefulSet(t, c, set, fmt.Sprintf(`{"metadata":{"annotations":{%q:"false"}}}`, ppsctl.AutoGenerateAnnotation))
	harness.Eventually(t, 30*time.Second, "the generated PersistentPodState deleted", func() (bool, string) {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "auto"}, &appsv1alpha1.PersistentPodState{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// With kruise-manager down, a pod no PersistentPodState selects is created as if Kruise were not
// installed, while the recreation of a pod of a targeted StatefulSet (apps/v1) is refused, naming
// the entry, never made without its recorded topology; once the manager is back the pod is created
// with the required zone as a node selector and the preferred node as a weighted term.
func TestPersistentPodStateOutageBlocksOnlyItsPods(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := ppsZonedNodes(t, ns)
	tmpl := ppsStatefulSet(ns, "web", 2)
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: appsv1.StatefulSetSpec{
		Replicas: tmpl.Spec.Replicas, Selector: tmpl.Spec.Selector, ServiceName: "web", Template: tmpl.Spec.Template,
		PodManagementPolicy: appsv1.ParallelPodManagement}}
	set.Spec.Template.Spec.ReadinessGates = nil
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pps := &appsv1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-state"},
		Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web"},
			RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{ppsZoneLabel}},
			PreferredPersistentTopology: []appsv1alpha1.PersistentPodStatePreferredTopologyTerm{{Weight: 80,
				Preference: appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{corev1.LabelHostname}}}}}}
	if err := c.Create(ctx, pps); err != nil {
		t.Fatal(err)
	}
	recorded := waitPersistentPodState(t, c, ns, "web-state", "records the 2 pods", func(p *appsv1alpha1.PersistentPodState) bool {
		return len(p.Status.PodStates) == 2
	})
	entry := ppswebhook.EntryName(ns, "web-state")
	harness.Eventually(t, 30*time.Second, "entry "+entry+" registered", func() (bool, string) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: install.PersistentPodStateConfiguration}, cfg); err != nil {
			return false, err.Error()
		}
		return slices.ContainsFunc(cfg.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return w.Name == entry }), ""
	})
	state := recorded.Status.PodStates["web-0"]
	old := podsByName(t, ns, "app=web")["web-0"]
	if old == nil {
		t.Fatal("no pod web-0")
	}

	err := sb.WithoutKruiseManager(ctx, func() error {
		plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain", Labels: map[string]string{"app": "plain"}},
			Spec: podSpec("registry.example/app:v1")}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, plain, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("a pod no PersistentPodState selects was blocked by the outage: %w", err)
		}
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "web-0", metav1.DeleteOptions{}); err != nil {
			return err
		}
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
			if err != nil {
				return err
			}
			for _, e := range events.Items {
				if strings.Contains(e.Message, "web-0") && strings.Contains(e.Message, entry) {
					if p, err := cs.CoreV1().Pods(ns).Get(ctx, "web-0", metav1.GetOptions{}); err == nil && p.UID != old.UID {
						return fmt.Errorf("web-0 was created during the outage: %s", describe(p))
					}
					t.Logf("during the outage: plain pod created; web-0 refused: %s", e.Message)
					return nil
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		return fmt.Errorf("no FailedCreate event of web-0 naming %s within 60s", entry)
	})
	if err != nil {
		t.Fatal(err)
	}
	var back *corev1.Pod
	harness.Eventually(t, 60*time.Second, "web-0 recreated once the manager is back", func() (bool, string) {
		back = podsByName(t, ns, "app=web")["web-0"]
		if back == nil || back.UID == old.UID {
			return false, "not recreated yet"
		}
		return condition(back, corev1.PodReady) == corev1.ConditionTrue, describe(back)
	})
	if back.Spec.NodeSelector[ppsZoneLabel] != state.NodeTopologyLabels[ppsZoneLabel] || zones[back.Spec.NodeName] != state.NodeTopologyLabels[ppsZoneLabel] {
		t.Errorf("web-0 back on %s with nodeSelector %v; recorded %+v", back.Spec.NodeName, back.Spec.NodeSelector, state)
	}
	var terms []corev1.PreferredSchedulingTerm
	if a := back.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		terms = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if len(terms) != 1 || terms[0].Weight != 80 || len(terms[0].Preference.MatchExpressions) != 1 ||
		terms[0].Preference.MatchExpressions[0].Key != corev1.LabelHostname || terms[0].Preference.MatchExpressions[0].Values[0] != state.NodeName {
		t.Errorf("web-0's preferred terms %+v; recorded node %s", terms, state.NodeName)
	}
}
