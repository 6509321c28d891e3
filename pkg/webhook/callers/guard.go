package callers

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// refusedCalls counts the calls refused for want of a client certificate, by registered path.
var refusedCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_webhook_unauthenticated_calls_refused_total",
	Help: "Calls to kruise-manager's webhook server refused because the caller presented no client certificate of the API server's or a replica's CA, by webhook path."},
	[]string{"path"})

func init() { metrics.Registry.MustRegister(refusedCalls) }

// Refusal is the body of the 403 answer to an anonymous caller when a certificate is required.
const Refusal = "kruise-manager's webhook server requires a client certificate: one signed by a CA of --webhook-client-ca-file " +
	"(the API server's, sent when its --admission-control-config-file names a kubeconfig with a client certificate for this webhook) " +
	"or by the webhook CA (another kruise-manager replica)"

// Guard wraps the handler registered at path: the request's context carries who called (Of),
// and an anonymous caller is refused with 403 (Refusal) when a certificate is required and path
// is not exempt.
func (t *Trust) Guard(path string, h http.Handler) http.Handler {
	exempt := slices.Contains(t.Exempt, path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := t.Classify(r.TLS)
		if kind == Anonymous && t.Required() && !exempt {
			refusedCalls.WithLabelValues(path).Inc()
			http.Error(w, Refusal, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r.WithContext(WithKind(r.Context(), kind)))
	})
}

// Server is a webhook server whose every handler is guarded by Trust.
type Server struct {
	webhook.Server
	Trust *Trust
}

// Register serves hook at path behind Trust.Guard.
func (s *Server) Register(path string, hook http.Handler) {
	s.Server.Register(path, s.Trust.Guard(path, hook))
}
