package sandbox

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-ng/kruise/pkg/app/install"
)

// MetricsScraper is the ServiceAccount (in KruiseNamespace) the sandbox scrapes Kruise's metrics
// as: it is bound to install.MetricsReaderClusterRole, as a cluster's Prometheus would be.
const MetricsScraper = "kruise-metrics-scraper"

// metricsTokenFile holds MetricsScraper's token, under DIR/kruise.
const metricsTokenFile = "metrics-token"

// createMetricsScraper creates MetricsScraper, binds it to the metrics reader role and writes a
// token of it (valid for the sandbox's life) to DIR/kruise/metrics-token.
func (s *Sandbox) createMetricsScraper(ctx context.Context) error {
	cs, err := s.clientset()
	if err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: KruiseNamespace, Name: MetricsScraper}}
	if _, err := cs.CoreV1().ServiceAccounts(KruiseNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the metrics scraper's service account: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: MetricsScraper},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: install.MetricsReaderClusterRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: KruiseNamespace, Name: MetricsScraper}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bind the metrics scraper to %s: %w", install.MetricsReaderClusterRole, err)
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(serviceAccountTokenValidity / time.Second))}}
	tok, err := cs.CoreV1().ServiceAccounts(KruiseNamespace).CreateToken(ctx, MetricsScraper, req, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of the metrics scraper: %w", err)
	}
	file := s.MetricsTokenFile()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(tok.Status.Token), 0o600)
}

// MetricsTokenFile is the file holding MetricsScraper's bearer token (written when Kruise starts).
func (s *Sandbox) MetricsTokenFile() string { return filepath.Join(s.Dir, kruiseDir, metricsTokenFile) }

// MetricsToken is the bearer token of MetricsScraper, which may read Kruise's /metrics.
func (s *Sandbox) MetricsToken() (string, error) {
	b, err := os.ReadFile(s.MetricsTokenFile())
	if err != nil {
		return "", fmt.Errorf("the sandbox's metrics token (it is written when Kruise starts): %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// metricsHTTP scrapes Kruise's endpoints, whose certificates are self-signed.
var metricsHTTP = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed loopback endpoints
}

// GetMetrics GETs https://127.0.0.1:PORT/metrics (kruise-manager's or kruise-daemon's) with token
// ("": none) and returns the status code and body.
func GetMetrics(ctx context.Context, port int, token string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url("https", port)+"/metrics", nil)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := metricsHTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// ScrapeMetrics reads the /metrics served on a loopback port (kruise-manager's, a replica's or
// kruise-daemon's) as MetricsScraper; an answer other than 200 is an error with its body.
func (s *Sandbox) ScrapeMetrics(ctx context.Context, port int) ([]byte, error) {
	token, err := s.MetricsToken()
	if err != nil {
		return nil, err
	}
	code, body, err := GetMetrics(ctx, port, token)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("scrape of port %d as %s: %d %s", port, MetricsScraper, code, strings.TrimSpace(string(body)))
	}
	return body, nil
}
