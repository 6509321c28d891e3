package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
)

// Kruise Rollouts (openkruise/rollouts) run beside Kruise in a sandbox, as its release installs it
// in a cluster, with three local differences: its manager is a process of the sandbox (the binary
// `make tools` builds into bin/k8s/kruise-rollout, next to its release's config/crd, config/webhook
// and lua_configuration), it serves its webhooks on loopback (WEBHOOK_HOST, with the certificates it
// writes for that address), and it acts with the sandbox's admin credentials.
const (
	// RolloutsNamespace is Kruise Rollouts' namespace (its POD_NAMESPACE).
	RolloutsNamespace = "kruise-rollout"
	rolloutsProcess   = "kruise-rollout"
	rolloutsDir       = "kruise-rollout"
	// Its webhook configurations' names, which its manager looks up to fill in.
	rolloutsMutating   = "kruise-rollout-mutating-webhook-configuration"
	rolloutsValidating = "kruise-rollout-validating-webhook-configuration"
	rolloutsService    = "kruise-rollout-webhook-service"
)

// rolloutsConverted are the CRDs its release serves through its conversion webhook
// (config/crd/patches).
var rolloutsConverted = map[string]bool{"rollouts.rollouts.kruise.io": true, "batchreleases.rollouts.kruise.io": true}

// StartKruiseRollouts installs Kruise Rollouts' CRDs and webhook configurations from its release's
// files beside binary, starts its manager and returns once its webhooks are configured (their CA
// bundle and URL written by it). The returned stop removes its webhook configurations first (so no
// write waits on a webhook that is gone), then stops its manager and removes its CRDs.
func (s *Sandbox) StartKruiseRollouts(ctx context.Context, binary string) (stop func(context.Context) error, err error) {
	if s.hasProcess(rolloutsProcess) {
		return nil, fmt.Errorf("sandbox %s already runs Kruise Rollouts", s.Dir)
	}
	release, err := filepath.EvalSymlinks(binary)
	if err != nil {
		return nil, fmt.Errorf("the binary of Kruise Rollouts: %w; run `make tools`", err)
	}
	release = filepath.Dir(release)
	cs, err := s.clientset()
	if err != nil {
		return nil, err
	}
	cfg, err := s.RESTConfig()
	if err != nil {
		return nil, err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	crds, err := rolloutsCRDs(release)
	if err != nil {
		return nil, err
	}
	if err := s.installRollouts(ctx, cs, ext, release, crds); err != nil {
		return nil, err
	}
	p, err := s.startRolloutsManager(binary, release)
	if err != nil {
		return nil, err
	}
	stop = func(ctx context.Context) error {
		return s.stopKruiseRollouts(ctx, cs, ext, p, crds)
	}
	if err := s.waitFor(ctx, "Kruise Rollouts' webhooks configured", func(ctx context.Context) (bool, error) {
		if !p.Alive() {
			return false, fmt.Errorf("kruise-rollout exited: %s", tail(p.Log, 20))
		}
		return rolloutsConfigured(ctx, cs, ext, crds)
	}); err != nil {
		return nil, errors.Join(err, stop(context.WithoutCancel(ctx)))
	}
	return stop, nil
}

// installRollouts creates its namespace, CRDs (with the conversion webhook its release patches in)
// and its webhook configurations (its release's, with the object selectors of its overlay).
func (s *Sandbox) installRollouts(ctx context.Context, cs kubernetes.Interface, ext apiextensionsclient.Interface,
	release string, crds []*apiextensionsv1.CustomResourceDefinition) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: RolloutsNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for _, crd := range crds {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil &&
			!apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	mutating, validating, err := rolloutsWebhooks(release)
	if err != nil {
		return err
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s: %w", mutating.Name, err)
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s: %w", validating.Name, err)
	}
	return nil
}

// startRolloutsManager runs its manager in its release folder (it reads ./lua_configuration).
func (s *Sandbox) startRolloutsManager(binary, release string) (*Process, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	certs := filepath.Join(s.Dir, kruiseDir, rolloutsDir, "webhook-certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return nil, err
	}
	return s.launch(Process{Name: rolloutsProcess, Binary: binary, Dir: release,
		Args: []string{"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(ports[1])},
		Env: []string{"KUBECONFIG=" + s.Kubeconfig(), "POD_NAMESPACE=" + RolloutsNamespace, "WEBHOOK_HOST=127.0.0.1",
			"WEBHOOK_PORT=" + strconv.Itoa(ports[0]), "WEBHOOK_CERT_DIR=" + certs}})
}

// rolloutsConfigured reports whether its manager has written its CA bundle into every webhook and
// conversion it serves.
func rolloutsConfigured(ctx context.Context, cs kubernetes.Interface, ext apiextensionsclient.Interface,
	crds []*apiextensionsv1.CustomResourceDefinition) (bool, error) {
	m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, rolloutsMutating, metav1.GetOptions{})
	if err != nil {
		return false, nil
	}
	v, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, rolloutsValidating, metav1.GetOptions{})
	if err != nil {
		return false, nil
	}
	var configs []admissionregistrationv1.WebhookClientConfig
	for _, w := range m.Webhooks {
		configs = append(configs, w.ClientConfig)
	}
	for _, w := range v.Webhooks {
		configs = append(configs, w.ClientConfig)
	}
	if len(configs) == 0 {
		return false, nil
	}
	for _, c := range configs {
		if len(c.CABundle) == 0 || c.URL == nil {
			return false, nil
		}
	}
	for _, crd := range crds {
		if !rolloutsConverted[crd.Name] {
			continue
		}
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conv := got.Spec.Conversion
		if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil || len(conv.Webhook.ClientConfig.CABundle) == 0 {
			return false, nil
		}
	}
	return true, nil
}

// stopKruiseRollouts removes its webhook configurations, stops its manager and deletes its CRDs
// (their objects should be gone first: its finalizers need its manager).
func (s *Sandbox) stopKruiseRollouts(ctx context.Context, cs kubernetes.Interface, ext apiextensionsclient.Interface, p *Process,
	crds []*apiextensionsv1.CustomResourceDefinition) error {
	var errs []error
	if err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, rolloutsMutating, metav1.DeleteOptions{}); err != nil &&
		!apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	if err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, rolloutsValidating, metav1.DeleteOptions{}); err != nil &&
		!apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	s.logf("stopping %s (pid %d)", p.Name, p.PID)
	if err := p.Stop(10 * time.Second); err != nil {
		errs = append(errs, err)
	}
	for _, crd := range crds {
		if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil &&
			!apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rolloutsCRDs reads its release's CRDs, with a conversion webhook on those its release converts
// (the service reference is what its manager rewrites to its URL and CA bundle).
func rolloutsCRDs(release string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := filepath.Glob(filepath.Join(release, "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRDs of Kruise Rollouts in %s: run `make tools`", release)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := decodeYAMLFile(f, crd); err != nil {
			return nil, err
		}
		if rolloutsConverted[crd.Name] {
			path := "/convert"
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1beta1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
						Namespace: RolloutsNamespace, Name: rolloutsService, Path: &path}}}}
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// rolloutsWebhooks reads its release's webhook configurations (config/webhook/manifests.yaml) with
// its overlay's object selectors (patch_manifests.yaml), named and addressed as its manager expects.
func rolloutsWebhooks(release string) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	data, err := os.ReadFile(filepath.Join(release, "webhook", "manifests.yaml"))
	if err != nil {
		return nil, nil, fmt.Errorf("the webhooks of Kruise Rollouts: %w; run `make tools`", err)
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	docs := bytes.Split(data, []byte("\n---"))
	if len(docs) < 2 {
		return nil, nil, fmt.Errorf("%s: want a mutating and a validating configuration", release)
	}
	for _, d := range docs {
		var meta metav1.TypeMeta
		if err := utilyaml.Unmarshal(d, &meta); err != nil {
			return nil, nil, err
		}
		var into any
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			into = mutating
		case "ValidatingWebhookConfiguration":
			into = validating
		default:
			continue
		}
		if err := utilyaml.Unmarshal(d, into); err != nil {
			return nil, nil, err
		}
	}
	patch := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := decodeYAMLFile(filepath.Join(release, "webhook", "patch_manifests.yaml"), patch); err != nil {
		return nil, nil, err
	}
	selectors := map[string]*metav1.LabelSelector{}
	for _, w := range patch.Webhooks {
		selectors[w.Name] = w.ObjectSelector
	}
	mutating.ObjectMeta = metav1.ObjectMeta{Name: rolloutsMutating}
	validating.ObjectMeta = metav1.ObjectMeta{Name: rolloutsValidating}
	for i := range mutating.Webhooks {
		w := &mutating.Webhooks[i]
		if sel, ok := selectors[w.Name]; ok {
			w.ObjectSelector = sel
		}
		addressRollouts(&w.ClientConfig)
	}
	for i := range validating.Webhooks {
		addressRollouts(&validating.Webhooks[i].ClientConfig)
	}
	return mutating, validating, nil
}

// addressRollouts points a webhook at its service, which its manager rewrites to its URL.
func addressRollouts(c *admissionregistrationv1.WebhookClientConfig) {
	if c.Service != nil {
		c.Service.Namespace, c.Service.Name = RolloutsNamespace, rolloutsService
	}
}

func decodeYAMLFile(file string, into any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := utilyaml.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
