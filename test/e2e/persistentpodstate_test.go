package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	ppsctl "github.com/kruise-ng/kruise/pkg/controller/persistentpodstate"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/webhook/topologypin"
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
	p := privatePodSpec(ns, "")
	set.Spec.Template.Spec.NodeSelector, set.Spec.Template.Spec.Tolerations = p.NodeSelector, p.Tolerations
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
	t.Parallel()
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
	entry := topologypin.EntryName(ns, "db")
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
	if back.Spec.NodeSelector[ppsZoneLabel] != want || back.Annotations[topologypin.InjectedAnnotation] != "db" {
		t.Errorf("recreated db-1: nodeSelector %v, annotations %v; want %s=%s and %s=db", back.Spec.NodeSelector, back.Annotations,
			ppsZoneLabel, want, topologypin.InjectedAnnotation)
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
	t.Parallel()
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

// A user's change of a generated PersistentPodState stays, as in OpenKruise, whose generator
// rewrites it only when the workload's generation annotations change: with WhenDeleted set on it,
// a scale-in from 5 to 1 keeps all five states; an annotation change then puts the generated spec
// back.
func TestGeneratedPersistentPodStateKeepsTheUsersChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	ppsZonedNodes(t, ns)
	set := ppsStatefulSet(ns, "kept", 5)
	set.Annotations = map[string]string{ppsctl.AutoGenerateAnnotation: "true", ppsctl.RequiredTopologyAnnotation: ppsZoneLabel}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	waitStatefulSet(t, c, ns, "kept", "5 ready", func(s *appsv1beta1.StatefulSet) bool { return s.Status.ReadyReplicas == 5 })
	generated := waitPersistentPodState(t, c, ns, "kept", "records the 5 pods", func(p *appsv1alpha1.PersistentPodState) bool {
		return len(p.Status.PodStates) == 5
	})
	generated.Spec.PersistentPodStateRetentionPolicy = appsv1alpha1.PersistentPodStateRetainWhenDeleted
	if err := c.Update(ctx, generated); err != nil {
		t.Fatal(err)
	}
	patchStatefulSet(t, c, set, `{"spec":{"replicas":1}}`)
	waitStatefulSet(t, c, ns, "kept", "scaled to 1", func(s *appsv1beta1.StatefulSet) bool { return s.Status.Replicas == 1 })
	waitPersistentPodState(t, c, ns, "kept", "observed with the user's retention", func(p *appsv1alpha1.PersistentPodState) bool {
		return p.Spec.PersistentPodStateRetentionPolicy == appsv1alpha1.PersistentPodStateRetainWhenDeleted
	})
	// Long enough for a generator that reconciles on the PersistentPodState's changes to undo the
	// user's write, and for the states' controller to drop scaled-in states under WhenScaled.
	harness.Consistently(t, 5*time.Second, "the user's WhenDeleted and all 5 states kept", func() (bool, string) {
		got := &appsv1alpha1.PersistentPodState{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kept"}, got); err != nil {
			return false, err.Error()
		}
		return got.Spec.PersistentPodStateRetentionPolicy == appsv1alpha1.PersistentPodStateRetainWhenDeleted && len(got.Status.PodStates) == 5,
			fmt.Sprintf("retention %q, %d states", got.Spec.PersistentPodStateRetentionPolicy, len(got.Status.PodStates))
	})
	patchStatefulSet(t, c, set, fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ppsctl.PreferredTopologyAnnotation, corev1.LabelHostname))
	waitPersistentPodState(t, c, ns, "kept", "generated again from the annotations", func(p *appsv1alpha1.PersistentPodState) bool {
		return p.Spec.PersistentPodStateRetentionPolicy != appsv1alpha1.PersistentPodStateRetainWhenDeleted &&
			len(p.Spec.PreferredPersistentTopology) == 1
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
	entry := topologypin.EntryName(ns, "web-state")
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

// ppsWhitelist sets the PersistentPodState custom workload whitelist of the kruise-configuration
// ConfigMap (creating the ConfigMap when there is none) and puts back what was there when the
// test ends. Other entries are left alone (a merge patch of this key only).
func ppsWhitelist(t *testing.T, whitelist string) {
	t.Helper()
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(sandbox.KruiseNamespace)
	name, key := workloadfinder.ConfigurationName, workloadfinder.PersistentPodStateWhitelist
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sandbox.KruiseNamespace}, Data: map[string]string{key: whitelist}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err == nil {
		t.Cleanup(func() { _ = cms.Delete(context.Background(), name, metav1.DeleteOptions{}) })
		return
	} else if !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	old, err := cms.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := func(value any) error {
		raw, err := json.Marshal(map[string]any{"data": map[string]any{key: value}})
		if err != nil {
			return err
		}
		_, err = cms.Patch(context.Background(), name, types.MergePatchType, raw, metav1.PatchOptions{})
		return err
	}
	if err := patch(whitelist); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var prev any // null removes the key
		if v, had := old.Data[key]; had {
			prev = v
		}
		_ = patch(prev)
	})
}

// ppsShardCRD creates a throwaway namespaced CRD, kind Shard, with a scale subresource
// (spec.replicas, status.selector) and a status subresource; it is deleted when the test ends.
func ppsShardCRD(t *testing.T, c client.Client) schema.GroupVersionResource {
	t.Helper()
	ctx := context.Background()
	group := "pps" + utilrand.String(5) + ".e2e.kruise.io"
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "shards." + group},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "shards", Singular: "shard", Kind: "Shard", ListKind: "ShardList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{},
					Scale: &apiextv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas",
						StatusReplicasPath: ".status.replicas", LabelSelectorPath: ptr.To(".status.selector")}}}}},
	}
	if err := c.Create(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), crd) })
	harness.Eventually(t, 30*time.Second, "CRD "+crd.Name+" established", func() (bool, string) {
		got := &apiextv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
			return false, err.Error()
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextv1.Established && cond.Status == apiextv1.ConditionTrue {
				return true, ""
			}
		}
		return false, fmt.Sprint(got.Status.Conditions)
	})
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: "shards"}
}

// A custom workload of PPS_Watch_Custom_Workload_WhiteList, here a Shard of a CRD of the test's
// own whose pods the test creates as its controller (named shard-<ordinal>), is run as a
// StatefulSet is: its ready pods' zones are recorded (its replicas and selector read through its
// scale subresource), a pod recreated under a recorded name gets its zone as a node selector
// through its own webhook entry, and a scale-in drops the state of the ordinal removed. A
// ReplicationController of the whitelist gets its entry too (its owner references name the core
// group's bare apiVersion).
func TestPersistentPodStateCustomWorkload(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	zones := ppsZonedNodes(t, ns)
	gvr := ppsShardCRD(t, c)
	ppsWhitelist(t, fmt.Sprintf(`{"workloads":[{"Group":%q,"Version":"v1","Kind":"Shard"},{"Group":"","Version":"v1","Kind":"ReplicationController"}]}`, gvr.Group))
	cfg, err := sb.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	shards := dynamic.NewForConfigOrDie(cfg).Resource(gvr).Namespace(ns)
	shard := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": "Shard",
		"metadata": map[string]any{"name": "shard"}, "spec": map[string]any{"replicas": int64(3)}}}
	if shard, err = shards.Create(ctx, shard, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	shard.Object["status"] = map[string]any{"replicas": int64(3), "selector": "app=shard"}
	if _, err = shards.UpdateStatus(ctx, shard, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: shard.GetAPIVersion(), Kind: "Shard", Name: "shard", UID: shard.GetUID(), Controller: ptr.To(true)}
	newPod := func(name string) *corev1.Pod {
		spec := podSpec("registry.example/shard:v1")
		spec.NodeSelector = map[string]string{"e2e.kruise.io/ns": ns}
		spec.Tolerations = []corev1.Toleration{{Key: privateTaint, Operator: corev1.TolerationOpEqual, Value: ns, Effect: corev1.TaintEffectNoSchedule}}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "shard"},
			OwnerReferences: []metav1.OwnerReference{owner}}, Spec: spec}
		got, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i := range 3 {
		newPod(fmt.Sprintf("shard-%d", i))
	}
	for _, pps := range []*appsv1alpha1.PersistentPodState{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shard"}, Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: shard.GetAPIVersion(), Kind: "Shard", Name: "shard"},
			RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{ppsZoneLabel}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "legacy"}, Spec: appsv1alpha1.PersistentPodStateSpec{
			TargetReference:            appsv1alpha1.PersistentPodStateTargetReference{APIVersion: "v1", Kind: "ReplicationController", Name: "legacy"},
			RequiredPersistentTopology: &appsv1alpha1.PersistentPodStateNodeTopologyTerm{NodeTopologyKeys: []string{ppsZoneLabel}}}},
	} {
		if err := c.Create(ctx, pps); err != nil {
			t.Fatal(err)
		}
	}
	recorded := waitPersistentPodState(t, c, ns, "shard", "records the 3 pods", func(p *appsv1alpha1.PersistentPodState) bool {
		return len(p.Status.PodStates) == 3
	})
	pods := podsByName(t, ns, "app=shard")
	for name, state := range recorded.Status.PodStates {
		p := pods[name]
		if p == nil || state.NodeName != p.Spec.NodeName || state.NodeTopologyLabels[ppsZoneLabel] != zones[p.Spec.NodeName] {
			t.Errorf("state of %s: %+v; the pod runs on %v", name, state, p)
		}
	}
	entries := []string{topologypin.EntryName(ns, "shard"), topologypin.EntryName(ns, "legacy")}
	harness.Eventually(t, 30*time.Second, fmt.Sprint("entries ", entries, " registered"), func() (bool, string) {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: install.PersistentPodStateConfiguration}, cfg); err != nil {
			return false, err.Error()
		}
		var names []string
		for _, w := range cfg.Webhooks {
			names = append(names, w.Name)
		}
		return slices.Contains(names, entries[0]) && slices.Contains(names, entries[1]), fmt.Sprint(names)
	})

	// The test, as the Shard's controller, recreates shard-1 after deleting it.
	want := recorded.Status.PodStates["shard-1"].NodeTopologyLabels[ppsZoneLabel]
	deletePod := func(name string) {
		t.Helper()
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(t, 30*time.Second, name+" gone", func() (bool, string) {
			_, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
	}
	deletePod("shard-1")
	back := newPod("shard-1")
	if back.Spec.NodeSelector[ppsZoneLabel] != want || back.Annotations[topologypin.InjectedAnnotation] != "shard" {
		t.Errorf("recreated shard-1: nodeSelector %v, annotations %v; want %s=%s and %s=shard", back.Spec.NodeSelector, back.Annotations,
			ppsZoneLabel, want, topologypin.InjectedAnnotation)
	}
	harness.Eventually(t, 60*time.Second, "shard-1 ready in zone "+want, func() (bool, string) {
		back = podsByName(t, ns, "app=shard")["shard-1"]
		if back == nil {
			return false, "gone"
		}
		return condition(back, corev1.PodReady) == corev1.ConditionTrue && zones[back.Spec.NodeName] == want, describe(back)
	})

	// Retention WhenScaled: scaled to 2, the state of shard-2 goes with its pod.
	if _, err := shards.Patch(ctx, "shard", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deletePod("shard-2")
	waitPersistentPodState(t, c, ns, "shard", "drops shard-2", func(p *appsv1alpha1.PersistentPodState) bool {
		_, has0 := p.Status.PodStates["shard-0"]
		_, has1 := p.Status.PodStates["shard-1"]
		_, has2 := p.Status.PodStates["shard-2"]
		return has0 && has1 && !has2
	})
}
