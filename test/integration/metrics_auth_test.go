package integration

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/pkg/app/daemon"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/platform/metricsauth"
	"github.com/kruise-ng/kruise/test/harness"
)

// daemonClusterRole is kruise-daemon's generated ClusterRole (config/rbac/daemon/role.yaml),
// renamed to name.
func daemonClusterRole(t *testing.T, name string) *rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "config", "rbac", "daemon", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---") {
		role := &rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), role); err != nil {
			t.Fatal(err)
		}
		if role.Kind == "ClusterRole" {
			role.ObjectMeta = metav1.ObjectMeta{Name: name}
			return role
		}
	}
	t.Fatal("no ClusterRole in config/rbac/daemon/role.yaml")
	return nil
}

// saToken creates ServiceAccount ns/name, bound to clusterRole when set, and returns a token of it.
func saToken(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, clusterRole string) string {
	t.Helper()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if clusterRole != "" {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
		})
	}
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Status.Token
}

// kruise-daemon's endpoints, served with its own (generated) RBAC against a real API server:
// /metrics answers 401 without a token or with a forged one, 403 to a ServiceAccount without
// kruise-metrics-reader and 200 to one with it; /healthz needs no token and gives no reason.
func TestDaemonEndpointsNeedAuthorization(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := harness.Namespace(t, cs)
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, install.MetricsReaderRole(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The daemon runs as a user holding only kruise-daemon's generated ClusterRole.
	const daemonUser = "it-kruise-daemon"
	role := daemonClusterRole(t, "it-kruise-daemon-role")
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: daemonUser}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	daemonCfg, err := api.ConfigFor(daemonUser)
	if err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "it_daemon_up", Help: "a sample"})
	g.Set(1)
	reg.MustRegister(g)
	var unhealthy atomic.Bool
	h, err := daemon.Endpoints(daemonCfg, true, reg, func(*http.Request) error {
		if unhealthy.Load() {
			return io.ErrUnexpectedEOF // a reason /healthz must not tell
		}
		return nil
	}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	if srv.TLS, err = metricsauth.SelfSignedTLS("localhost"); err != nil {
		t.Fatal(err)
	}
	srv.StartTLS()
	defer srv.Close()
	get := func(path, token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	nosy := saToken(ctx, t, cs, ns, "nosy", "")
	reader := saToken(ctx, t, cs, ns, "prometheus", install.MetricsReaderClusterRole)
	for _, c := range []struct {
		who, token string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a forged token", "not-a-token", http.StatusUnauthorized},
		{"a ServiceAccount without kruise-metrics-reader", nosy, http.StatusForbidden},
		{"a ServiceAccount bound to kruise-metrics-reader", reader, http.StatusOK},
	} {
		code, body := get("/metrics", c.token)
		if code != c.want {
			t.Errorf("%s: /metrics answered %d, want %d: %.200s", c.who, code, c.want, body)
		}
		if code == http.StatusOK && !strings.Contains(body, "it_daemon_up 1") {
			t.Errorf("%s: /metrics lacks the registry's sample:\n%.500s", c.who, body)
		}
	}
	if code, body := get("/healthz", ""); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz without a token: %d %q, want 200 \"ok\"", code, body)
	}
	unhealthy.Store(true)
	if code, body := get("/healthz", ""); code != http.StatusServiceUnavailable || body != "unhealthy\n" {
		t.Errorf("/healthz of an unhealthy daemon: %d %q, want 503 \"unhealthy\" and no reason", code, body)
	}
}
