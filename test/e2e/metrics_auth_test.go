package e2e

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/pkg/app/sandbox"
)

// kruise-manager's /metrics answers only over TLS to a token the API server authenticates whose
// user may get /metrics (ClusterRole kruise-metrics-reader): 401 without a (valid) token, 403 for
// a ServiceAccount without the role, 200 for one with it; its /healthz stays open.
func TestMetricsNeedAuthorization(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := namespace(t)
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nosy"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "nosy",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reader, err := sb.MetricsToken()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who, token string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a forged token", "not-a-token", http.StatusUnauthorized},
		{"a ServiceAccount without kruise-metrics-reader", tok.Status.Token, http.StatusForbidden},
		{"the sandbox's scraper (kruise-metrics-reader)", reader, http.StatusOK},
	} {
		code, body, err := sandbox.GetMetrics(ctx, sb.Ports.KruiseMetrics, c.token)
		if err != nil {
			t.Fatalf("%s: %v", c.who, err)
		}
		if code != c.want {
			t.Errorf("%s: /metrics answered %d, want %d: %.200s", c.who, code, c.want, body)
		}
	}
	// Plain HTTP is not served metrics.
	if resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(sb.Ports.KruiseMetrics) + "/metrics"); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP /metrics answered 200")
		}
	}
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(sb.Ports.KruiseProbe) + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz without a token answered %d, want 200", resp.StatusCode)
	}
}
