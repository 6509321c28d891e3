package topologypin

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
)

func state(ns, name, apiVersion, kind string, s v1alpha1.PersistentPodStateSpec) *v1alpha1.PersistentPodState {
	s.TargetReference.APIVersion, s.TargetReference.Kind = apiVersion, kind
	return &v1alpha1.PersistentPodState{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: s}
}

func TestEntries(t *testing.T) {
	deleting := state("ns", "deleting", "apps/v1", "StatefulSet", spec([]string{zone}))
	deleting.DeletionTimestamp = &metav1.Time{}
	states := []*v1alpha1.PersistentPodState{
		state("ns", "web", "apps/v1", "StatefulSet", spec([]string{zone})),
		state("ns", "db", "apps.kruise.io/v1beta1", "StatefulSet", spec(nil, prefer(10, zone))),
		state("ns", "clone", "apps.kruise.io/v1alpha1", "CloneSet", spec([]string{zone})),
		state("ns", "empty", "apps/v1", "StatefulSet", spec(nil)),
		state("kube-system", "sys", "apps/v1", "StatefulSet", spec([]string{zone})),
		deleting,
	}
	base := admissionregistrationv1.WebhookClientConfig{CABundle: []byte("ca"),
		Service: &admissionregistrationv1.ServiceReference{Namespace: "kruise-system", Name: "svc", Path: ptr.To("/mutate-pod")}}
	got, skipped := Entries(states, EntryOptions{ClientConfig: base, ExcludedNamespaces: []string{"kube-system"}})
	var names []string
	for _, w := range got {
		names = append(names, w.Name)
	}
	if want := "ns.db.persistentpodstate.kruise.io,ns.web.persistentpodstate.kruise.io"; strings.Join(names, ",") != want {
		t.Fatalf("entries %v, want %s", names, want)
	}
	for key, why := range map[string]string{"ns/clone": SkipTarget, "ns/empty": SkipTopology, "kube-system/sys": SkipExcluded, "ns/deleting": SkipDeleting} {
		if skipped[key] != why {
			t.Errorf("%s skipped for %q, want %q", key, skipped[key], why)
		}
	}
	db, web := got[0], got[1]
	if *db.FailurePolicy != admissionregistrationv1.Fail || *db.ClientConfig.Service.Path != PathPrefix+"ns/db" || string(db.ClientConfig.CABundle) != "ca" ||
		*base.Service.Path != "/mutate-pod" {
		t.Errorf("db: failure policy %s, path %s (base %s)", *db.FailurePolicy, *db.ClientConfig.Service.Path, *base.Service.Path)
	}
	if r := db.Rules[0]; len(r.Operations) != 1 || r.Operations[0] != admissionregistrationv1.Create || r.Resources[0] != "pods" {
		t.Errorf("db rules %+v", db.Rules)
	}
	if ns := db.NamespaceSelector.MatchExpressions; len(ns) != 1 || ns[0].Key != corev1.LabelMetadataName || ns[0].Values[0] != "ns" {
		t.Errorf("db namespace selector %+v", db.NamespaceSelector)
	}
	if c := db.MatchConditions[0].Expression; !strings.Contains(c, `r.apiVersion.startsWith("apps.kruise.io/")`) || !strings.Contains(c, `r.name == "db"`) {
		t.Errorf("db owner condition %s", c)
	}
	if c := web.MatchConditions[0].Expression; !strings.Contains(c, `r.apiVersion.startsWith("apps/")`) || !strings.Contains(c, `r.kind == "StatefulSet"`) {
		t.Errorf("web owner condition %s", c)
	}
	if c := web.MatchConditions[1].Expression; !strings.Contains(c, `"kruise.io/injected-persistent-pod-state" in object.metadata.annotations`) {
		t.Errorf("web injected condition %s", c)
	}
}

func TestEntryNameFitsLongNames(t *testing.T) {
	long := strings.Repeat("a", 253)
	if n := EntryName("ns", long); len(n) > 253 || !strings.HasSuffix(n, ".persistentpodstate.kruise.io") {
		t.Errorf("EntryName of a 253-character name: %s", n)
	}
}

// A whitelisted custom workload gets an entry as a StatefulSet does; its owner condition matches
// the kind's group, the core group's bare apiVersion included. A kind out of the whitelist gets none.
func TestEntriesCustomWorkloads(t *testing.T) {
	states := []*v1alpha1.PersistentPodState{
		state("ns", "game", "games.example.com/v1", "GameServerSet", spec([]string{zone})),
		state("ns", "legacy", "v1", "ReplicationController", spec([]string{zone})),
		state("ns", "clone", "apps.kruise.io/v1alpha1", "CloneSet", spec([]string{zone})),
	}
	custom := []schema.GroupKind{{Group: "games.example.com", Kind: "GameServerSet"}, {Kind: "ReplicationController"}}
	got, skipped := Entries(states, EntryOptions{CustomWorkloads: custom})
	if len(got) != 2 || got[0].Name != EntryName("ns", "game") || got[1].Name != EntryName("ns", "legacy") || skipped["ns/clone"] != SkipTarget {
		t.Fatalf("entries %+v, skipped %v", got, skipped)
	}
	if c := got[0].MatchConditions[0].Expression; !strings.Contains(c, `r.apiVersion.startsWith("games.example.com/")`) || !strings.Contains(c, `r.kind == "GameServerSet"`) {
		t.Errorf("game owner condition %s", c)
	}
	if c := got[1].MatchConditions[0].Expression; !strings.Contains(c, `!r.apiVersion.contains("/")`) || !strings.Contains(c, `r.kind == "ReplicationController"`) {
		t.Errorf("legacy owner condition %s", c)
	}
	if _, skipped := Entries(states[:1], EntryOptions{}); skipped["ns/game"] != SkipTarget {
		t.Errorf("without the whitelist: skipped %v", skipped)
	}
}
