package metricsauth

import (
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Filter authenticates and authorizes every request with the API server behind cfg (through hc):
// a bearer token it does not authenticate (none, forged, expired) gets 401; a user who may not
// `get` the request's path as a non-resource URL gets 403 naming that permission; a failed
// authorization check 500. It is the FilterProvider of controller-runtime's metrics server, like
// controller-runtime's own filters.WithAuthenticationAndAuthorization, except that a token the
// API server rejects is answered 401 (as kube-apiserver answers it) rather than 500. Answers are
// cached: a token for a minute, an allowed user for 5 minutes, a refused one for 30 seconds.
func Filter(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	authnClient, err := authenticationv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	authzClient, err := authorizationv1.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	retry := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:               &apiserver.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient: authnClient, TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff: retry, CacheTTL: time.Minute,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("token authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authzClient, AllowCacheTTL: 5 * time.Minute, DenyCacheTTL: 30 * time.Second,
		WebhookRetryBackoff: retry,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("access authorizer: %w", err)
	}
	return func(log logr.Logger, h http.Handler) (http.Handler, error) {
		return &guarded{authn: authn, authz: authz, log: log, next: h}, nil
	}, nil
}

// guarded serves next to the requests its authenticator and authorizer let through.
type guarded struct {
	authn authenticator.Request
	authz authorizer.UnconditionalAuthorizer
	log   logr.Logger
	next  http.Handler
}

func (g *guarded) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	res, ok, err := g.authn.AuthenticateRequest(req)
	if err != nil || !ok {
		g.log.V(1).Info("metrics scrape not authenticated", "remote", req.RemoteAddr, "reason", fmt.Sprint(err))
		http.Error(w, "Unauthorized: send a bearer token of a user allowed to get "+req.URL.Path, http.StatusUnauthorized)
		return
	}
	verb := strings.ToLower(req.Method)
	if req.Method == http.MethodHead {
		verb = "get"
	}
	attrs := authorizer.AttributesRecord{User: res.User, Verb: verb, Path: req.URL.Path}
	decision, reason, err := g.authz.Authorize(req.Context(), attrs)
	switch {
	case err != nil:
		g.log.Error(err, "metrics scrape: authorization check failed", "user", res.User.GetName())
		http.Error(w, "authorization check failed", http.StatusInternalServerError)
	case decision != authorizer.DecisionAllow:
		g.log.V(1).Info("metrics scrape forbidden", "user", res.User.GetName(), "reason", reason)
		http.Error(w, fmt.Sprintf("Forbidden: user %q may not %s the non-resource URL %s (ClusterRole kruise-metrics-reader grants it)",
			res.User.GetName(), verb, req.URL.Path), http.StatusForbidden)
	default:
		g.next.ServeHTTP(w, req)
	}
}

// Guard wraps h with Filter, asking the API server behind cfg.
func Guard(cfg *rest.Config, log logr.Logger, h http.Handler) (http.Handler, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("API client for the metrics filter: %w", err)
	}
	f, err := Filter(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("metrics authentication and authorization: %w", err)
	}
	return f(log, h)
}

// SelfSignedTLS is a server TLS configuration with a new self-signed certificate for host (and
// localhost, 127.0.0.1), as controller-runtime's metrics server makes when it is given no
// certificate: it encrypts the scrape and carries the bearer token safely; scrapers do not verify
// it (Prometheus' insecure_skip_verify), as they do not for kube-controller-manager's.
func SelfSignedTLS(host string) (*tls.Config, error) {
	if host == "" {
		host = "localhost"
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{{127, 0, 0, 1}}, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("self-signed metrics certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("self-signed metrics certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// BindSecureFlag registers --metrics-secure (default true) on fs, setting *insecure to its
// negation: the zero value of an options struct holding insecure is the secure one.
func BindSecureFlag(fs *flag.FlagSet, insecure *bool, usage string) {
	fs.BoolFunc("metrics-secure", usage+" (default true)", func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("--metrics-secure=%q: want true or false", v)
		}
		*insecure = !b
		return nil
	})
}
