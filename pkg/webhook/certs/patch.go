package certs

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Targets are the objects whose CA bundle (and, in URL mode, endpoint) the manager maintains.
type Targets struct {
	MutatingWebhookConfigurations   []string
	ValidatingWebhookConfigurations []string
	// CRDs are the CustomResourceDefinitions whose conversion strategy is Webhook.
	CRDs []string
	// URL, when set (https://127.0.0.1:9876), makes every webhook call the server at URL+path instead of
	// through its Service: for API servers that cannot reach Services, such as the sandbox's.
	URL string
	// Scopes set what the manager owns beyond the endpoint on individual mutating webhooks, by
	// webhook name: selectors and failure policy that depend on its flags.
	Scopes map[string]func(*admissionregistrationv1.MutatingWebhook)
}

// endpoint sets the CA bundle, and in URL mode replaces a Service reference by URL+path.
// It reports whether anything changed.
func endpoint(cfg *admissionregistrationv1.WebhookClientConfig, caBundle []byte, url string) bool {
	changed := !bytes.Equal(cfg.CABundle, caBundle)
	cfg.CABundle = caBundle
	if url != "" {
		path := ""
		if cfg.Service != nil && cfg.Service.Path != nil {
			path = *cfg.Service.Path
		} else if cfg.URL != nil {
			path = pathOf(*cfg.URL)
		}
		want := strings.TrimSuffix(url, "/") + path
		if cfg.URL == nil || *cfg.URL != want || cfg.Service != nil {
			cfg.URL, cfg.Service, changed = &want, nil, true
		}
	}
	return changed
}

// pathOf returns the path part of an https://host:port/path URL.
func pathOf(u string) string {
	rest := strings.TrimPrefix(u, "https://")
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return ""
}

// PatchCABundle writes caBundle into every webhook of the target configurations and into the
// conversion webhook of the target CRDs that use one. Missing targets are an error: a webhook that
// is not registered cannot be trusted to run.
func PatchCABundle(ctx context.Context, c client.Client, t Targets, caBundle []byte) error {
	for _, name := range t.MutatingWebhookConfigurations {
		err := patchConfiguration(ctx, c, name, &admissionregistrationv1.MutatingWebhookConfiguration{},
			func(o *admissionregistrationv1.MutatingWebhookConfiguration) (changed bool) {
				for i := range o.Webhooks {
					changed = endpoint(&o.Webhooks[i].ClientConfig, caBundle, t.URL) || changed
					if scope := t.Scopes[o.Webhooks[i].Name]; scope != nil {
						before := o.Webhooks[i].DeepCopy()
						scope(&o.Webhooks[i])
						changed = !equality.Semantic.DeepEqual(before, &o.Webhooks[i]) || changed
					}
				}
				return changed
			})
		if err != nil {
			return fmt.Errorf("patch CA bundle of MutatingWebhookConfiguration %s: %w", name, err)
		}
	}
	for _, name := range t.ValidatingWebhookConfigurations {
		err := patchConfiguration(ctx, c, name, &admissionregistrationv1.ValidatingWebhookConfiguration{},
			func(o *admissionregistrationv1.ValidatingWebhookConfiguration) (changed bool) {
				for i := range o.Webhooks {
					changed = endpoint(&o.Webhooks[i].ClientConfig, caBundle, t.URL) || changed
				}
				return changed
			})
		if err != nil {
			return fmt.Errorf("patch CA bundle of ValidatingWebhookConfiguration %s: %w", name, err)
		}
	}
	for _, name := range t.CRDs {
		if err := patchCRD(ctx, c, name, caBundle, t.URL); err != nil {
			return fmt.Errorf("patch CA bundle of CRD %s: %w", name, err)
		}
	}
	return nil
}

// patchConfiguration reads the named object into obj, lets edit change it, and writes it back when
// edit reports a change, retrying on conflicts.
func patchConfiguration[T client.Object](ctx context.Context, c client.Client, name string, obj T, edit func(T) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			return err
		}
		if !edit(obj) {
			return nil
		}
		return c.Update(ctx, obj)
	})
}

func patchCRD(ctx context.Context, c client.Client, name string, caBundle []byte, url string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &apiextv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		conv := crd.Spec.Conversion
		if conv == nil || conv.Strategy != apiextv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			return nil // installed without a conversion webhook: nothing calls the manager for it
		}
		// The CRD's client config mirrors the admission one; convert through it to share endpoint().
		cc := conv.Webhook.ClientConfig
		adm := admissionregistrationv1.WebhookClientConfig{URL: cc.URL, CABundle: cc.CABundle}
		if cc.Service != nil {
			adm.Service = &admissionregistrationv1.ServiceReference{Namespace: cc.Service.Namespace, Name: cc.Service.Name, Path: cc.Service.Path, Port: cc.Service.Port}
		}
		if !endpoint(&adm, caBundle, url) {
			return nil
		}
		cc.URL, cc.CABundle = adm.URL, adm.CABundle
		if adm.Service == nil {
			cc.Service = nil
		}
		return c.Update(ctx, crd)
	})
}
