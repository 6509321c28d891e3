package metricsauth

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// tokens authenticates the bearer tokens it maps to a user; any other token is an error, as the
// API server's TokenReview answers a forged one.
type tokens map[string]string

func (t tokens) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil, false, nil
	}
	name, ok := t[tok]
	if !ok {
		return nil, false, errors.New("invalid bearer token")
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
}

// readers may get /metrics; "broken" makes the check fail.
type readers map[string]bool

func (r readers) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch {
	case a.GetUser().GetName() == "broken":
		return authorizer.DecisionNoOpinion, "", errors.New("SubjectAccessReview failed")
	case r[a.GetUser().GetName()] && a.GetVerb() == "get" && a.GetPath() == "/metrics" && !a.IsResourceRequest():
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "no rule", nil
}

func TestGuardedAnswers(t *testing.T) {
	g := &guarded{authn: tokens{"r": "prometheus", "n": "nosy", "b": "broken"}, authz: readers{"prometheus": true}, log: logr.Discard(),
		next: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metric 1\n")) })}
	for _, c := range []struct {
		name, header, method string
		code                 int
		says                 string
	}{
		{"no token", "", http.MethodGet, http.StatusUnauthorized, "bearer token"},
		{"a forged token", "Bearer forged", http.MethodGet, http.StatusUnauthorized, "bearer token"},
		{"basic auth", "Basic cHJvbTpwYXNz", http.MethodGet, http.StatusUnauthorized, "bearer token"},
		{"a user without the role", "Bearer n", http.MethodGet, http.StatusForbidden, `user "nosy" may not get the non-resource URL /metrics`},
		{"a failed check", "Bearer b", http.MethodGet, http.StatusInternalServerError, "authorization check failed"},
		{"a reader", "Bearer r", http.MethodGet, http.StatusOK, "metric 1"},
		{"a reader's HEAD", "Bearer r", http.MethodHead, http.StatusOK, ""},
		{"a reader's POST", "Bearer r", http.MethodPost, http.StatusForbidden, "may not post"},
	} {
		req := httptest.NewRequest(c.method, "/metrics", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != c.code || !strings.Contains(rec.Body.String(), c.says) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, rec.Code, rec.Body.String(), c.code, c.says)
		}
	}
}

func TestSelfSignedTLS(t *testing.T) {
	cfg, err := SelfSignedTLS("node-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Certificates) != 1 || cfg.MinVersion == 0 {
		t.Fatalf("config %+v", cfg)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatalf("a TLS request to the self-signed server: %v", err)
	}
	_ = resp.Body.Close()
}

func TestBindSecureFlag(t *testing.T) {
	for _, c := range []struct {
		args     []string
		insecure bool
	}{{nil, false}, {[]string{"--metrics-secure"}, false}, {[]string{"--metrics-secure=true"}, false}, {[]string{"--metrics-secure=false"}, true}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var insecure bool
		BindSecureFlag(fs, &insecure, "usage")
		if err := fs.Parse(c.args); err != nil || insecure != c.insecure {
			t.Errorf("%v: insecure %v (%v), want %v", c.args, insecure, err, c.insecure)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var insecure bool
	BindSecureFlag(fs, &insecure, "usage")
	if err := fs.Parse([]string{"--metrics-secure=maybe"}); err == nil {
		t.Error("--metrics-secure=maybe accepted")
	}
}
