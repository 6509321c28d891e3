package registration

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
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
	// PerNamespace caps how many objects of the kind one namespace may hold (0: no cap), counted
	// through Reader in a List (an empty list of the kind) when one is created: every object adds
	// entries to a configuration the whole cluster shares, which etcd bounds in size, so one
	// tenant must not fill it for everyone.
	PerNamespace int
	List         func() client.ObjectList
}

// DefaultPerNamespace is kruise-manager's default Gate.PerNamespace
// (--max-entry-objects-per-namespace): with an entry of about 1.5 KiB (each copies the CA
// bundle), a namespace at the cap holds about a tenth of etcd's 1.5 MiB object limit.
const DefaultPerNamespace = 100

// overCap refuses the create of obj when its namespace holds PerNamespace objects of the kind
// already (403, as a ResourceQuota refuses).
func (g *Gate[T, W]) overCap(ctx context.Context, obj T, name string) error {
	ns := obj.GetNamespace()
	if g.PerNamespace <= 0 || g.List == nil || ns == "" {
		return nil
	}
	if req, err := admission.RequestFromContext(ctx); err != nil || req.Operation != admissionv1.Create {
		return nil
	}
	list := g.List()
	if err := g.Reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("%s %s: count the namespace's %ss: %v; retry", g.Kind, name, g.Kind, err)
	}
	if n := meta.LenList(list); n >= g.PerNamespace {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
			Message: fmt.Sprintf("%s %s: namespace %s holds %d %ss, the most kruise-manager allows in one namespace (--max-entry-objects-per-namespace=%d): "+
				"each adds webhook entries to a configuration all namespaces share; delete one or ask the cluster's administrator", g.Kind, name, ns, n, g.Kind, g.PerNamespace)}}
	}
	return nil
}

// Admit registers obj's entries and waits until the API server calls them; an error says why
// they could not be registered or confirmed, and the object is then refused, so that no request
// after its create or update returned passes by its entries. A dry run is only checked against
// the cap (PerNamespace).
func (g *Gate[T, W]) Admit(ctx context.Context, obj T) error {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	if err := g.overCap(ctx, obj, name); err != nil {
		return err
	}
	if req, err := admission.RequestFromContext(ctx); err == nil && req.DryRun != nil && *req.DryRun {
		return nil // a dry run registers nothing
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
