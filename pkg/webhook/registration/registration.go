package registration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Source is the webhook whose client config the entries copy.
type Source struct {
	// Configuration and Webhook name the MutatingWebhookConfiguration and its webhook.
	Configuration, Webhook string
}

// ClientConfig is the source webhook's client config, or nil while it has no CA bundle yet.
func (s Source) ClientConfig(ctx context.Context, r client.Reader) (*admissionregistrationv1.WebhookClientConfig, error) {
	src := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := r.Get(ctx, client.ObjectKey{Name: s.Configuration}, src); err != nil {
		return nil, fmt.Errorf("read MutatingWebhookConfiguration %s: %w", s.Configuration, err)
	}
	for i := range src.Webhooks {
		if w := &src.Webhooks[i]; w.Name == s.Webhook && len(w.ClientConfig.CABundle) > 0 {
			return &w.ClientConfig, nil
		}
	}
	return nil, nil
}

// WithPath is base reaching path instead of its own.
func WithPath(base admissionregistrationv1.WebhookClientConfig, path string) admissionregistrationv1.WebhookClientConfig {
	out := *base.DeepCopy()
	if out.Service != nil {
		out.Service.Path = &path
		return out
	}
	if out.URL != nil {
		u := *out.URL
		rest := strings.TrimPrefix(u, "https://")
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			u = "https://" + rest[:i]
		}
		u += path
		out.URL = &u
	}
	return out
}

// Name is object + suffix, or a hash of object + suffix when that is longer than a webhook name
// may be (253).
func Name(object, suffix string) string {
	if len(object)+len(suffix) <= 253 {
		return object + suffix
	}
	sum := sha256.Sum256([]byte(object))
	return "h" + hex.EncodeToString(sum[:16]) + suffix
}

// One is the single work item of a registrar: every change is handled by one pass over all the
// objects behind its entries.
var One = reconcile.Request{NamespacedName: types.NamespacedName{Name: "registration"}}

// EnqueueOne maps every event to One.
var EnqueueOne = handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
	return []reconcile.Request{One}
})

// Named passes the events of the objects named names only.
func Named(names ...string) builder.Predicates {
	return builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return slices.Contains(names, o.GetName())
	}))
}
