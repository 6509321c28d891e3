package mount

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/pkg/webhook/callers"
)

// Admission serves h at path on srv (a path ending in "/": every path under it). Every admission
// handler runs inside exactly one admission.Webhook built here, so all share one context (Suffix,
// Forwarded), one panic recovery (a 500 answer) and one request logger; a Webhook built by
// admission.WithValidator or WithDefaulter is served by its Handler and may set no option of its
// own. The server adds the rest: the callers' guard (callers.Server) and the request metrics.
func Admission(srv webhook.Server, path string, h admission.Handler) {
	if wh, ok := h.(*admission.Webhook); ok {
		if wh.RecoverPanic != nil || wh.WithContextFunc != nil || wh.LogConstructor != nil {
			panic(fmt.Errorf("mount: the webhook at %s sets options of its own; the mount sets them for every path", path))
		}
		h = wh.Handler
	}
	srv.Register(path, &admission.Webhook{Handler: h, WithContextFunc: func(ctx context.Context, r *http.Request) context.Context {
		ctx = context.WithValue(ctx, suffixKey{}, strings.TrimPrefix(r.URL.Path, path))
		forwarded := r.Header.Get(ForwardedHeader) != "" && callers.Of(r.Context()) == callers.Replica
		return context.WithValue(ctx, forwardedKey{}, forwarded)
	}})
}

// HTTP serves h, a handler that answers no admission review (the CRD conversion webhook), on srv
// at path, with only what the server itself adds.
func HTTP(srv webhook.Server, path string, h http.Handler) { srv.Register(path, h) }

type suffixKey struct{}

// Suffix is the part of the request's path after the path Admission was given ("" when the
// request's path is that path).
func Suffix(ctx context.Context) string {
	s, _ := ctx.Value(suffixKey{}).(string)
	return s
}

// ForwardedHeader marks a call one replica passed on to another (pkg/webhook/decider): it is
// answered where it arrives, never passed on again. It counts only on a call whose caller
// presented a replica's certificate (pkg/webhook/callers); from anyone else it is ignored.
const ForwardedHeader = "X-Kruise-Forwarded-By"

type forwardedKey struct{}

// Forwarded reports whether the call came from another replica rather than the API server: it
// carries ForwardedHeader and its caller presented a replica's certificate.
func Forwarded(ctx context.Context) bool {
	f, _ := ctx.Value(forwardedKey{}).(bool)
	return f
}
