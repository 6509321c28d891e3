package registration

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Gate is one kind's admission side of its registration (Admission): Admit registers the entries
// of an object version about to be stored and returns once the API server calls them. W is the
// kind of webhook of Configuration (MutatingWebhook or ValidatingWebhook).
type Gate[T client.Object, W any] struct {
	Admission Admission
	// Configuration holds the kind's entries; Source is the webhook whose client config they copy,
	// read by Reader (normally the cache).
	Configuration string
	Source        Source
	Reader        client.Reader
	// Kind names the objects in errors ("SidecarSet"); Key is an object's registrar key.
	Kind string
	Key  func(T) string
	// Entries are the entries of obj, named as its registrar names them (none: nothing to wait for).
	Entries func(ctx context.Context, obj T, base admissionregistrationv1.WebhookClientConfig) ([]W, error)
}

// Admit registers obj's entries and waits until the API server calls them; an error says why
// they could not be registered or confirmed, and the object is then refused, so that no request
// after its create or update returned passes by its entries.
func (g *Gate[T, W]) Admit(ctx context.Context, obj T) error {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	base, err := g.Source.ClientConfig(ctx, g.Reader)
	if err != nil {
		return fmt.Errorf("%s %s: its webhook entries cannot be registered: %v; retry", g.Kind, name, err)
	}
	if base == nil {
		return fmt.Errorf("%s %s: its webhook entries cannot be registered yet: Kruise's webhook has no CA bundle (kruise-manager is starting); retry", g.Kind, name)
	}
	want, err := g.Entries(ctx, obj, *base)
	if err != nil {
		return fmt.Errorf("%s %s: its webhook entries cannot be computed: %v; retry", g.Kind, name, err)
	}
	err = admit(ctx, g.Admission, kindOf[W](), g.Configuration, Object{Key: g.Key(obj), Generation: obj.GetGeneration(), Probe: *base}, want)
	switch {
	case errors.Is(err, ErrNotConfirmed):
		return fmt.Errorf("%s %s: refused so that no request passes by its webhook entries: %v; retry", g.Kind, name, err)
	case err != nil:
		return fmt.Errorf("%s %s: its webhook entries cannot be registered: %v; retry", g.Kind, name, err)
	}
	return nil
}

// kindOf is the configuration kind whose webhooks are Ws.
func kindOf[W any]() kind[W] {
	var w W
	switch any(w).(type) {
	case admissionregistrationv1.MutatingWebhook:
		return any(mutating).(kind[W])
	case admissionregistrationv1.ValidatingWebhook:
		return any(validating).(kind[W])
	}
	panic(fmt.Sprintf("registration: %T is no webhook kind", w))
}
