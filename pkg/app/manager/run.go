package manager

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/kruise-ng/kruise/pkg/platform/kruisescheme"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/platform/cachetrim"
	"github.com/kruise-ng/kruise/pkg/webhook/access"
	"github.com/kruise-ng/kruise/pkg/webhook/callers"
	"github.com/kruise-ng/kruise/pkg/webhook/certs"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
)

// The manager's permissions, generated into config/rbac by `make generate`.
// Objects of fixed names are named (resourceNames); a create cannot be limited so.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-mutating-webhook-configuration,verbs=get;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=kruise-validating-webhook-configuration,verbs=get;update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=statefulsets.apps.kruise.io;daemonsets.apps.kruise.io;sidecarsets.apps.kruise.io,verbs=get;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create
// +kubebuilder:rbac:groups="",namespace=kruise-system,resources=secrets,resourceNames=kruise-webhook-certs,verbs=get;watch;update
// +kubebuilder:rbac:groups="",namespace=kruise-system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kruise-system,resources=leases,resourceNames=kruise-manager,verbs=get;update
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kruise-system,resources=leases,verbs=create

// NewScheme returns a scheme with Kubernetes' built-in types and every Kruise API (apis.NewScheme).
func NewScheme() (*runtime.Scheme, error) { return kruisescheme.New() }

// Run starts kruise-manager and blocks until ctx ends. Order matters: the webhook certificates are
// made current before the webhook server starts (it serves them from CertDir); the webhook server
// starts before any controller, so no object is created by a controller that the webhooks have not
// seen (controller-runtime starts webhook runnables first and readiness reports them). What the
// manager runs is the table components (wiring.go).
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	log := ctrl.Log.WithName("kruise-manager")
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = float32(o.QPS), o.Burst
	cfg.UserAgent = "kruise-manager"
	scheme, err := NewScheme()
	if err != nil {
		return err
	}
	rot, trust, err := prepareCertificates(ctx, cfg, scheme, o, log)
	if err != nil {
		return err
	}
	mgr, err := newManager(cfg, scheme, o, trust)
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := mgr.Add(rot); err != nil {
		return err
	}
	gates, err := ParseFeatureGates(o.FeatureGates)
	if err != nil {
		return err
	}
	reportFeatureGates(log, gates)
	inPlace, err := inPlaceOptions(cfg, gates)
	if err != nil {
		return err
	}
	w := newWiring(ctx, o, mgr, scheme, cfg, gates, inPlace, log)
	for _, c := range components {
		if c.enabled != nil && !c.enabled(w) {
			continue
		}
		if err := c.setup(w); err != nil {
			return fmt.Errorf("set up %s: %w", c.name, err)
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	log.Info("starting", "webhookPort", o.WebhookPort, "webhookURL", o.webhookURL(), "leaderElection", o.LeaderElect)
	return mgr.Start(ctx)
}

// prepareCertificates makes the webhook certificates current (before the webhook server serves
// them) and returns their rotator, to run in the manager, and the trust of the webhook callers.
func prepareCertificates(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, o Options, log logr.Logger) (*certs.Rotator, *callers.Trust, error) {
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("create API client: %w", err)
	}
	dns, ips := o.webhookNames()
	podScope := func(w *admissionregistrationv1.MutatingWebhook) {
		podmutation.Scope(w, podmutation.ScopeOptions{
			FailurePolicy:      admissionregistrationv1.FailurePolicyType(o.PodWebhookFailurePolicy),
			ExcludedNamespaces: o.podWebhookExcluded(),
		})
	}
	rot := &certs.Rotator{
		Client:  direct,
		Watch:   direct,
		Replica: o.ReplicaName,
		CertDir: o.CertDir,
		Options: certs.Options{Namespace: o.Namespace, SecretName: o.WebhookSecret, DNSNames: dns, IPs: ips},
		Targets: certs.Targets{
			MutatingWebhookConfigurations:   []string{MutatingWebhookConfiguration},
			ValidatingWebhookConfigurations: []string{ValidatingWebhookConfiguration},
			CRDs:                            o.ConversionCRDs,
			URL:                             o.webhookURL(),
			Scopes: map[string]func(*admissionregistrationv1.MutatingWebhook){
				podmutation.WebhookName:               podScope,
				podmutation.LaunchPriorityWebhookName: podScope,
			},
		},
		Log: log.WithName("certs"),
	}
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := rot.Sync(syncCtx); err != nil {
		return nil, nil, fmt.Errorf("prepare webhook certificates: %w", err)
	}
	trust := &callers.Trust{Replicas: rot.CABundle, ClientCAFile: o.WebhookClientCAFile, ClientNames: o.WebhookClientAllowedNames,
		Exempt: []string{install.ConversionPath}}
	if err := trust.Check(); err != nil {
		return nil, nil, err
	}
	return rot, trust, nil
}

// newManager is the controller-runtime manager: its cache, metrics, probes, leader election and
// the webhook server that knows its callers.
func newManager(cfg *rest.Config, scheme *runtime.Scheme, o Options, trust *callers.Trust) (ctrl.Manager, error) {
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOptions(o.SyncPeriod),
		Metrics:                 o.metricsOptions(),
		PprofBindAddress:        o.PprofAddr,
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		LeaseDuration:           &o.LeaseDuration,
		// A manager that stops gives up its Lease (the process exits right after), so a replacement
		// leads at once instead of a lease duration later.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: ptr.To(o.SeveralInProcess)},
		// Every webhook handler knows its caller by its client certificate (pkg/webhook/callers).
		WebhookServer: &callers.Server{Trust: trust, Server: webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort,
			CertDir: o.CertDir, TLSOpts: []func(*tls.Config){trust.ConfigureTLS}})},
	})
}

// inPlaceOptions are what in-place updates may change, from the feature gates and what the API
// server serves: resizing needs the pods/resize subresource, found by discovery.
func inPlaceOptions(cfg *rest.Config, gates FeatureGates) (inplace.Options, error) {
	opts := inplace.Options{EnvFromMetadata: gates.Enabled(InPlaceUpdateEnvFromMetadata)}
	if !gates.Enabled(InPlaceWorkloadVerticalScaling) {
		return opts, nil
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return inplace.Options{}, err
	}
	list, err := dc.ServerResourcesForGroupVersion("v1")
	if err != nil {
		return inplace.Options{}, fmt.Errorf("discover the core API: %w", err)
	}
	for _, r := range list.APIResources {
		if r.Name == "pods/resize" {
			opts.VerticalScaling = true
			return opts, nil
		}
	}
	return inplace.Options{}, fmt.Errorf("feature gate %s needs the pods/resize subresource, which this API server does not serve",
		InPlaceWorkloadVerticalScaling)
}

// cacheOptions keep less of each object in the informer cache: nothing reads managedFields from it
// (dropping them is most of a pod's size), and the strings pods of a workload have in common are
// held once (cachetrim.Pool: the live heap at the peak of a 10,000-pod rollout went from about
// 100 to about 70 MB). syncPeriod is --sync-period.
func cacheOptions(syncPeriod *time.Duration) cache.Options {
	strip := cache.TransformStripManagedFields()
	pool := &cachetrim.Pool{}
	return cache.Options{
		SyncPeriod:       syncPeriod,
		DefaultTransform: strip,
		ByObject:         map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: pool.Then(strip)}},
	}
}

// accessChecker is the check of authors' own rights at admission, nil when turned off.
func accessChecker(o Options, mgr ctrl.Manager) *access.Checker {
	if !o.AdmissionAccessChecks {
		return nil
	}
	return &access.Checker{Client: mgr.GetClient(), Mapper: mgr.GetRESTMapper()}
}
