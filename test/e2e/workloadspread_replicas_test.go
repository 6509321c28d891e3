package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/pkg/app/sandbox"
	"github.com/kruise-ng/kruise/pkg/core/spreadrules"
	"github.com/kruise-ng/kruise/pkg/webhook/decider"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
	"github.com/kruise-ng/kruise/test/harness"
)

// Two kruise-manager replicas: the one that does not lead passes a spread pod's admission on to
// the leader, which places it from memory; the quota holds across the two. The leader is then
// killed: the other takes over, publishes its own address and goes on from the status the first
// wrote behind. Admissions are posted to each replica's webhook server as the API server posts
// them (which replica the API server calls is up to its connection reuse). On a sandbox of its own.
func TestWorkloadSpreadTwoReplicas(t *testing.T) {
	ctx := context.Background()
	own, replicas := twoReplicas(t)
	cfg, err := own.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	c := harness.KruiseClient(t, cfg)
	address := func(r sandbox.ManagerReplica) string { return fmt.Sprintf("127.0.0.1:%d", r.WebhookPort) }
	var leader, follower sandbox.ManagerReplica
	harness.Eventually(t, 60*time.Second, "one leader, deciding", func() (bool, string) {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: sandbox.KruiseNamespace, Name: decider.LeaseName}, lease); err != nil {
			return false, err.Error()
		}
		for i, r := range replicas {
			if r.Leads(ctx) && ptr.Deref(lease.Spec.HolderIdentity, "") == address(r) {
				leader, follower = r, replicas[1-i]
				return true, ""
			}
		}
		return false, fmt.Sprintf("decider Lease holds %q", ptr.Deref(lease.Spec.HolderIdentity, ""))
	})
	waitDeciding(t, leader)

	ns := harness.Namespace(t, kubernetes.NewForConfigOrDie(cfg))
	clone := spreadCloneSet(ns, "two")
	if err := c.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	const maxA = 3
	if err := c.Create(ctx, newSpread(ns, "two", maxA)); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the spread in the manager's cache", func() (bool, string) {
		ws := &appsv1alpha1.WorkloadSpread{}
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "two"}, ws)
		return err == nil && ws.Status.ObservedGeneration == ws.Generation, fmt.Sprint(err)
	})
	post := admitter(t, c, own)
	forwarded0 := placements(t, follower, "forwarded")
	// Five pods through the follower: three fill a, two go to b.
	var got []string
	for i := range 5 {
		got = append(got, post(follower, clonePod(clone, fmt.Sprintf("two-x%d", i))))
	}
	if want := []string{"a", "a", "a", "b", "b"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("subsets through the follower %v, want %v", got, want)
	}
	if n := placements(t, follower, "forwarded") - forwarded0; n != 5 {
		t.Errorf("the follower passed %v placements on to the leader, want 5", n)
	}
	if n := placements(t, leader, "memory"); n < 5 {
		t.Errorf("the leader placed %v pods from memory, want at least 5", n)
	}
	harness.Eventually(t, 10*time.Second, "the leader's writes behind in the status", func() (bool, string) {
		ws := &appsv1alpha1.WorkloadSpread{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "two"}, ws); err != nil {
			return false, err.Error()
		}
		st := ws.Status.VersionedSubsetStatuses[spreadrules.VersionIgnored]
		return len(st) > 0 && len(st[0].CreatingPods) == maxA && st[0].MissingReplicas == 0, fmt.Sprintf("%+v", st)
	})

	if err := own.KillKruiseManagerReplica(leader); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 60*time.Second, "the other replica leads and decides", func() (bool, string) {
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: sandbox.KruiseNamespace, Name: decider.LeaseName}, lease); err != nil {
			return false, err.Error()
		}
		return follower.Leads(ctx) && ptr.Deref(lease.Spec.HolderIdentity, "") == address(follower), ptr.Deref(lease.Spec.HolderIdentity, "")
	})
	// a is full in the status the first leader wrote: the new one, deciding from memory, places
	// the next pod in b.
	waitDeciding(t, follower)
	memory0 := placements(t, follower, "memory")
	if s := post(follower, clonePod(clone, "two-y0")); s != "b" {
		t.Errorf("after the failover a pod went to %q, want b (a holds %d)", s, maxA)
	}
	if n := placements(t, follower, "memory") - memory0; n != 1 {
		t.Errorf("the new leader placed %v pods from memory, want 1", n)
	}
}

// waitDeciding waits until the replica decides from memory (its settling time after taking over).
func waitDeciding(t *testing.T, r sandbox.ManagerReplica) {
	t.Helper()
	harness.Eventually(t, 30*time.Second, r.Name+" deciding from memory", func() (bool, string) {
		v := metricValue(scrapeReplica(t, r), "kruise_webhook_deciding", nil)
		return v == 1, fmt.Sprint(v)
	})
}

// clonePod is a pod as clone's controller creates it.
func clonePod(clone *appsv1alpha1.CloneSet, name string) *corev1.Pod {
	labels := map[string]string{appsv1alpha1.CloneSetInstanceIDLabelKey: name[len(clone.Name)+1:]}
	for k, v := range clone.Spec.Template.Labels {
		labels[k] = v
	}
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: clone.Namespace, Name: name, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(clone, appsv1alpha1.GroupVersion.WithKind("CloneSet"))}},
		Spec: clone.Spec.Template.Spec}
}

// admitter posts a pod's creation to a replica's pod webhook, as the API server does (with its
// webhook client certificate), and returns the pod's subset.
func admitter(t *testing.T, c client.Client, s *sandbox.Sandbox) func(sandbox.ManagerReplica, *corev1.Pod) string {
	t.Helper()
	apiServer, err := s.WebhookClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: manager.MutatingWebhookConfiguration}, mwc); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	for _, w := range mwc.Webhooks {
		if w.Name == podmutation.WebhookName {
			pool.AppendCertsFromPEM(w.ClientConfig.CABundle)
		}
	}
	hc := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12,
		Certificates: []tls.Certificate{apiServer}}}}
	return func(r sandbox.ManagerReplica, pod *corev1.Pod) string {
		t.Helper()
		raw, _ := json.Marshal(pod)
		body, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: types.UID("uid-" + pod.Name), Operation: admissionv1.Create, Namespace: pod.Namespace, Name: pod.Name,
				Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
				Object: runtime.RawExtension{Raw: raw}}})
		resp, err := hc.Post(fmt.Sprintf("https://127.0.0.1:%d%s", r.WebhookPort, podmutation.Path), "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("post to %s: %v", r.Name, err)
		}
		defer resp.Body.Close()
		review := admissionv1.AdmissionReview{}
		if err := json.NewDecoder(resp.Body).Decode(&review); err != nil || review.Response == nil || !review.Response.Allowed {
			t.Fatalf("%s answered %+v (%v)", r.Name, review.Response, err)
		}
		patch, err := jsonpatch.DecodePatch(review.Response.Patch)
		if err != nil {
			t.Fatal(err)
		}
		out, err := patch.Apply(raw)
		if err != nil {
			t.Fatal(err)
		}
		placed := &corev1.Pod{}
		if err := json.Unmarshal(out, placed); err != nil {
			t.Fatal(err)
		}
		return subsetOf(placed)
	}
}

// placements is a replica's count of placements answered as answered.
func placements(t *testing.T, r sandbox.ManagerReplica, answered string) float64 {
	t.Helper()
	return max(0, metricValue(scrapeReplica(t, r), "kruise_workloadspread_placement_seconds", map[string]string{"answered": answered}))
}
