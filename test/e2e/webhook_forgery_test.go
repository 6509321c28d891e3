package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/platform/pki"
	"github.com/kruise-ng/kruise/pkg/webhook/budgetguard"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
)

// forger posts AdmissionReviews straight to kruise-manager's webhook port, never through the API
// server, presenting cert (nil: none) whatever CAs the server names, and trusting any server.
type forger struct {
	t    *testing.T
	name string
	cert *tls.Certificate
}

// post sends review to path and returns the HTTP status and the answer, or the connection's error.
func (f forger) post(path string, req *admissionv1.AdmissionRequest) (int, *admissionv1.AdmissionResponse, string, error) {
	f.t.Helper()
	cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // an attacker checks no server
	if f.cert != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return f.cert, nil }
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	defer tr.CloseIdleConnections()
	body, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	url := fmt.Sprintf("https://127.0.0.1:%d%s", sb.Ports.KruiseWebhook, path)
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	review := admissionv1.AdmissionReview{}
	if json.Unmarshal(data, &review) == nil && review.Response != nil {
		return resp.StatusCode, review.Response, "", nil
	}
	return resp.StatusCode, nil, strings.TrimSpace(string(data)), nil
}

// selfMade is a client certificate of a CA of the attacker's own, named as the API server's.
func selfMade(t *testing.T) *tls.Certificate {
	t.Helper()
	ca, err := pki.NewAuthority("forged-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Issue(pki.Request{CommonName: "kube-apiserver-webhook-client", Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &pair
}

// userCertificate is a user's client certificate of the cluster CA (what kubectl authenticates with).
func userCertificate(t *testing.T, user string) *tls.Certificate {
	t.Helper()
	file, err := sb.KubeconfigFor(user)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(file)
	if err != nil {
		t.Fatal(err)
	}
	auth := cfg.AuthInfos[cfg.Contexts[cfg.CurrentContext].AuthInfo]
	pair, err := tls.X509KeyPair(auth.ClientCertificateData, auth.ClientKeyData)
	if err != nil {
		t.Fatal(err)
	}
	return &pair
}

// guardedPods creates pods a, b and c under the budget guard (maxUnavailable 1 of 3), waits until
// its entries are registered, and returns a reader of what an admitted disruption changes in it.
func guardedPods(t *testing.T, c client.Client, ns string) func() string {
	t.Helper()
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"app": "forged"}},
			Spec: podSpec("registry.example/app:v1")}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b", "c"} {
		waitPod(t, ns, n, "ready", func(p *corev1.Pod) bool { return condition(p, corev1.PodReady) == corev1.ConditionTrue })
	}
	pub := maxOneBudget(ns, "guard", "forged", 3)
	if err := c.Create(ctx, pub); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, c, ns, "guard", "counts the pods", func(p *policyv1alpha1.PodUnavailableBudget) bool {
		return p.Status.TotalReplicas == 3 && p.Status.CurrentAvailable == 3 && p.Status.UnavailableAllowed == 1
	})
	waitBudgetEntries(t, c, ns, "guard")
	// What a disruption admitted changes in the budget (its controller may still write the rest of
	// its status, late, while other tests load the manager).
	return func() string {
		t.Helper()
		got := &policyv1alpha1.PodUnavailableBudget{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "guard"}, got); err != nil {
			t.Fatal(err)
		}
		st := got.Status
		return fmt.Sprintf("disrupted %v, unavailable %v, allowed %d", slices.Sorted(maps.Keys(st.DisruptedPods)),
			slices.Sorted(maps.Keys(st.UnavailablePods)), st.UnavailableAllowed)
	}
}

// A forged AdmissionReview — the DELETE of a pod a PodUnavailableBudget guards, the pod copied
// from the API server, UID and all — posted straight to the webhook port changes no budget (its
// disrupted and unavailable pods, the disruptions it allows): without a client certificate, with a
// self-made one or with a user's certificate of the cluster CA it is refused (403: a certificate
// that does not verify counts as none). Even with the API server's own certificate, a request about
// a pod that does not exist, or under another UID, is allowed and changes nothing (the budget
// decides from the live pod). The defaulting webhooks refuse anonymous callers too. A real eviction
// through the API server is still counted.
func TestForgedAdmissionReviewChangesNoBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	state := guardedPods(t, c, ns)
	live, err := cs.CoreV1().Pods(ns).Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deletion := func(p *corev1.Pod) *admissionv1.AdmissionRequest {
		raw, _ := json.Marshal(p)
		return &admissionv1.AdmissionRequest{UID: types.UID("forged-" + p.Name), Operation: admissionv1.Delete, Namespace: ns, Name: p.Name,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			OldObject: runtime.RawExtension{Raw: raw}, UserInfo: authenticationv1.UserInfo{Username: "system:admin"}}
	}
	path := budgetguard.PathPrefix + ns + "/guard"

	// Unauthenticated callers, with the real pod.
	for _, f := range []forger{{t, "no certificate", nil}, {t, "self-made certificate", selfMade(t)},
		{t, "a user's certificate of the cluster CA", userCertificate(t, "forger")}} {
		before := state()
		code, resp, body, err := f.post(path, deletion(live))
		switch {
		case err != nil || code != http.StatusForbidden || !strings.Contains(body, "requires a client certificate"):
			t.Errorf("%s: %d %+v %q %v; want 403 asking for a client certificate", f.name, code, resp, body, err)
		}
		t.Logf("%s: %d %q %v", f.name, code, body, err)
		if after := state(); after != before {
			t.Errorf("%s: the budget changed (%s → %s)", f.name, before, after)
		}
	}
	// A defaulting answer is not served to an anonymous caller either.
	raw, _ := json.Marshal(live)
	code, _, body, err := forger{t, "no certificate", nil}.post(podmutation.Path, &admissionv1.AdmissionRequest{UID: "forged",
		Operation: admissionv1.Create, Namespace: ns, Name: "x", Object: runtime.RawExtension{Raw: raw}})
	if err != nil || code != http.StatusForbidden {
		t.Errorf("anonymous call of the pod webhook: %d %q %v; want 403", code, body, err)
	}

	// The API server's own certificate, with requests the API server would not send.
	apiCert, err := sb.WebhookClientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	apiServer := forger{t, "the API server's certificate", &apiCert}
	ghost := live.DeepCopy()
	ghost.Name, ghost.UID = "ghost", "ghost-uid"
	otherUID := live.DeepCopy()
	otherUID.UID = "forged-uid"
	for name, req := range map[string]*admissionv1.AdmissionRequest{"a pod that does not exist": deletion(ghost), "another UID": deletion(otherUID)} {
		before := state()
		code, resp, body, err := apiServer.post(path, req)
		if err != nil || resp == nil || !resp.Allowed {
			t.Errorf("%s: %d %+v %q %v; want allowed", name, code, resp, body, err)
		}
		if after := state(); after != before {
			t.Errorf("%s: the budget changed (%s → %s)", name, before, after)
		}
	}

	// A real eviction through the API server is counted: the next one is refused.
	before := state()
	if err := cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}); err != nil {
		t.Fatalf("eviction through the API server refused: %v", err)
	}
	if after := state(); after == before {
		t.Errorf("the eviction was not recorded in the budget (still %s)", before)
	}
	err = cs.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}})
	if !apierrors.IsTooManyRequests(err) {
		t.Errorf("a second eviction: %v; want 429 (the first one counted)", err)
	}
}
