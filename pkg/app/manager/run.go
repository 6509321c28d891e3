package manager

import (
	"context"
	"crypto/tls"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/kruise-ng/kruise/apis"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/controller/advancedcronjob"
	"github.com/kruise-ng/kruise/pkg/controller/broadcastjob"
	"github.com/kruise-ng/kruise/pkg/controller/cloneset"
	"github.com/kruise-ng/kruise/pkg/controller/containerlaunchpriority"
	"github.com/kruise-ng/kruise/pkg/controller/crr"
	"github.com/kruise-ng/kruise/pkg/controller/daemonset"
	"github.com/kruise-ng/kruise/pkg/controller/ephemeraljob"
	"github.com/kruise-ng/kruise/pkg/controller/imagelistpulljob"
	"github.com/kruise-ng/kruise/pkg/controller/imagepulljob"
	"github.com/kruise-ng/kruise/pkg/controller/nodeimage"
	ppsctl "github.com/kruise-ng/kruise/pkg/controller/persistentpodstate"
	"github.com/kruise-ng/kruise/pkg/controller/podprobemarker"
	"github.com/kruise-ng/kruise/pkg/controller/podreadiness"
	"github.com/kruise-ng/kruise/pkg/controller/podunavailablebudget"
	"github.com/kruise-ng/kruise/pkg/controller/resourcedistribution"
	sidecarsetctl "github.com/kruise-ng/kruise/pkg/controller/sidecarset"
	"github.com/kruise-ng/kruise/pkg/controller/sidecarterminator"
	"github.com/kruise-ng/kruise/pkg/controller/statefulset"
	"github.com/kruise-ng/kruise/pkg/controller/uniteddeployment"
	"github.com/kruise-ng/kruise/pkg/controller/workloadspread"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/platform/cachetrim"
	"github.com/kruise-ng/kruise/pkg/webhook/access"
	"github.com/kruise-ng/kruise/pkg/webhook/budgetguard"
	"github.com/kruise-ng/kruise/pkg/webhook/callers"
	"github.com/kruise-ng/kruise/pkg/webhook/certs"
	"github.com/kruise-ng/kruise/pkg/webhook/decider"
	"github.com/kruise-ng/kruise/pkg/webhook/defaulting"
	"github.com/kruise-ng/kruise/pkg/webhook/deletionprotection"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
	"github.com/kruise-ng/kruise/pkg/webhook/sidecarinjection"
	"github.com/kruise-ng/kruise/pkg/webhook/spreadplacement"
	"github.com/kruise-ng/kruise/pkg/webhook/topologypin"
	"github.com/kruise-ng/kruise/pkg/webhook/validating"
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
func NewScheme() (*runtime.Scheme, error) { return apis.NewScheme() }

// Run starts kruise-manager and blocks until ctx ends. Order matters: the webhook certificates are
// made current before the webhook server starts (it serves them from CertDir); the webhook server
// starts before any controller, so no object is created by a controller that the webhooks have not
// seen (controller-runtime starts webhook runnables first and readiness reports them).
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
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("create API client: %w", err)
	}
	dns, ips := o.webhookNames()
	podScope := func(w *admissionregistrationv1.MutatingWebhook) {
		podmutation.Scope(w, podmutation.ScopeOptions{
			FailurePolicy:      admissionregistrationv1.FailurePolicyType(o.PodWebhookFailurePolicy),
			ExcludedNamespaces: install.PodWebhookExcludedNamespaces(o.Namespace, o.PodWebhookExcludedNamespaces...),
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
		return fmt.Errorf("prepare webhook certificates: %w", err)
	}
	trust := &callers.Trust{Replicas: rot.CABundle, ClientCAFile: o.WebhookClientCAFile, ClientNames: o.WebhookClientAllowedNames,
		Exempt: []string{install.ConversionPath}}
	if err := trust.Check(); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOptions(),
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
	gatedOff := gatedOffKinds(gates)
	defaulting.Register(mgr.GetWebhookServer(), scheme, mgr.GetAPIReader(), defaulting.Options{TemplateDefaults: !gates.Enabled(TemplateNoDefaults),
		HostNetworkHostPorts: gates.Enabled(DefaultHostNetworkHostPortsInPodTemplates), GatedOff: gatedOff})
	// The admissions of the objects that get webhook entries of their own register them before
	// the API server stores the objects (registration.Admission), confirmed by the probe entries.
	registration.ServeProbe(mgr.GetWebhookServer())
	admissions := registration.Admission{Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Namespace: o.Namespace}
	podSource := registration.Source{Configuration: MutatingWebhookConfiguration, Webhook: podmutation.WebhookName}
	finder := &workloadfinder.Finder{Reader: mgr.GetClient(), Scales: mgr.GetClient()}
	// A pod the pod webhook is called for is placed there, in the same call, where that webhook
	// fails closed as the spreads' entries do (they leave such pods out: podWebhookPlaces).
	excluded := install.PodWebhookExcludedNamespaces(o.Namespace, o.PodWebhookExcludedNamespaces...)
	podWebhookPlaces := func(namespace string) bool {
		return o.PodWebhookFailurePolicy == string(admissionregistrationv1.Fail) && !slices.Contains(excluded, namespace)
	}
	budgetGate := budgetguard.NewGate(admissions, install.BudgetProtectionConfiguration, podSource, mgr.GetClient(), finder)
	spreadGate := spreadplacement.NewGate(admissions, install.WorkloadSpreadConfiguration, podSource, mgr.GetClient(),
		finder, podWebhookPlaces)
	ppsGate := topologypin.NewGate(topologypin.GateOptions{Admission: admissions, Configuration: install.PersistentPodStateConfiguration,
		Source: podSource, Reader: mgr.GetClient(), Config: mgr.GetAPIReader(), Namespace: o.Namespace, ExcludedNamespaces: excluded})
	// One tenant must not fill the configurations every namespace shares (SidecarSets are
	// cluster-scoped: their authors are the cluster's administrators).
	budgetGate.PerNamespace, spreadGate.PerNamespace, ppsGate.PerNamespace =
		o.MaxEntryObjectsPerNamespace, o.MaxEntryObjectsPerNamespace, o.MaxEntryObjectsPerNamespace
	entryGates := validating.Gates{
		SidecarSet:         sidecarinjection.NewGate(admissions, install.SidecarInjectionConfiguration, podSource, mgr.GetClient(), excluded),
		Budget:             budgetGate,
		WorkloadSpread:     spreadGate,
		PersistentPodState: ppsGate,
	}
	validating.Register(mgr.GetWebhookServer(), scheme, validating.DryRunPodChecker{Client: mgr.GetClient()}, mgr.GetClient(),
		validating.SidecarSetOptions{Reader: mgr.GetClient(), Config: mgr.GetAPIReader(), Namespace: o.Namespace,
			PatchDefaultsAllowed: gates.Enabled(SidecarSetPatchPodMetadataDefaultsAllowed)}, mgr.GetClient(),
		validating.ResourceDistributionOptions{Reader: mgr.GetClient(), Live: mgr.GetAPIReader(), DryRun: mgr.GetClient(), Namespace: o.Namespace},
		entryGates, accessChecker(o, mgr))
	if err := deletionprotection.Register(mgr.GetWebhookServer(), deletionprotection.Options{Enabled: gates.Enabled(ResourcesDeletionProtection),
		Policy: deletionprotection.Policy{CRDCascading: gates.Enabled(DeletionProtectionForCRDCascadingGate)}, Reader: mgr.GetClient(), Config: cfg}); err != nil {
		return err
	}
	guard := &budgetguard.Handler{Reader: mgr.GetClient(), Live: mgr.GetAPIReader(), Writer: mgr.GetClient(), Finder: finder,
		Recorder: mgr.GetEventRecorder("podunavailablebudget-webhook"), Off: map[policyv1alpha1.PubOperation]bool{
			policyv1alpha1.PubDeleteOperation: !gates.Enabled(PodUnavailableBudgetDeleteGate),
			policyv1alpha1.PubEvictOperation:  !gates.Enabled(PodUnavailableBudgetDeleteGate),
			policyv1alpha1.PubUpdateOperation: !gates.Enabled(PodUnavailableBudgetUpdateGate),
			policyv1alpha1.PubResizeOperation: !gates.Enabled(PodUnavailableBudgetUpdateGate)},
		ResizeIsUpdate: !gates.Enabled(InPlacePodVerticalScaling)}
	budgetguard.Register(mgr.GetWebhookServer(), scheme, guard)
	validating.RegisterContainerRecreateRequests(mgr.GetWebhookServer(), scheme,
		validating.ContainerRecreateRequestOptions{Access: accessChecker(o, mgr), Pods: mgr.GetClient(), Budget: guard})
	topologypin.Register(mgr.GetWebhookServer(), scheme, &topologypin.Handler{Reader: mgr.GetClient(), Live: mgr.GetAPIReader()})
	spreadAdmission := &spreadplacement.Handler{Reader: mgr.GetClient(), Live: mgr.GetAPIReader(),
		Writer: mgr.GetClient(), Finder: finder, Recorder: mgr.GetEventRecorder("workloadspread-webhook")}
	// The leader answers the spreads' pod admissions from memory; the other replicas pass theirs on.
	decides := &decider.Decider{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: o.Namespace,
		Address: o.advertiseAddress(), ServerName: dns[0], Log: log.WithName("decider"), OnStop: []func(context.Context){spreadAdmission.Flush},
		ClientCertificate: callers.FileCertificate(filepath.Join(o.CertDir, certs.CertFile), filepath.Join(o.CertDir, certs.KeyFile)),
		CA: func(ctx context.Context) ([]byte, error) {
			cc, err := podSource.ClientConfig(ctx, mgr.GetClient())
			if err != nil || cc == nil {
				return nil, fmt.Errorf("no CA bundle yet: %w", err)
			}
			return cc.CABundle, nil
		}}
	if err := mgr.Add(decides); err != nil {
		return err
	}
	spreadAdmission.Decider = decides
	spreadplacement.Register(mgr.GetWebhookServer(), scheme, spreadAdmission)
	if o.PodWebhookFailurePolicy == string(admissionregistrationv1.Fail) {
		podmutation.Register(mgr.GetWebhookServer(), scheme, spreadAdmission)
	} else {
		podmutation.Register(mgr.GetWebhookServer(), scheme, nil)
	}
	// In-place updates ask the budgets before they take a pod out of service (B2 of issue 18).
	withBudget := engine.WithBudget(guard)
	// The engine's pod writes skip decoding the API server's answers (engine.WithPodWriter).
	core, err := kubernetes.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	podWriter := engine.WithPodWriter(core.CoreV1().RESTClient())
	sidecarinjection.Register(mgr.GetWebhookServer(), scheme, &sidecarinjection.Handler{
		Reader: mgr.GetClient(), Live: mgr.GetAPIReader(), RevisionNamespace: o.Namespace})
	// Conversion between v1alpha1 and v1beta1 (the hub) for the kinds whose schemas differ.
	mgr.GetWebhookServer().Register(install.ConversionPath, conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
	// Controllers run on the leader only, after the webhook server (controller-runtime starts webhook
	// runnables first).
	// CloneSet pods carry pod-template-hash, and with CloneSetShortHash the revision's hash alone.
	cloneSetInPlace := inPlace
	cloneSetInPlace.PodTemplateHash, cloneSetInPlace.ShortRevisionHash = true, gates.Enabled(CloneSetShortHash)
	if err := podcontrol.IndexOwned(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("index pods and revisions by controller: %w", err)
	}
	cloneSets := &cloneset.Reconciler{Client: mgr.GetClient(), Scheme: scheme, Recorder: mgr.GetEventRecorder("cloneset-controller"), OwnerIndexed: true,
		Engine: engine.New(mgr.GetClient(), nil, cloneSetInPlace, withBudget, podWriter), PartitionRollback: gates.Enabled(CloneSetPartitionRollback),
		PreDownload:             gates.Enabled(PreDownloadImageForInPlaceUpdate),
		RecreateOnClaimChange:   gates.Enabled(RecreatePodWhenChangeVCTInCloneSetGate),
		PreparingUpdateAsUpdate: gates.Enabled(PreparingUpdateAsUpdate), ScalingExcludePreparingDelete: o.CloneSetScalingExcludePreparingDelete}
	if err := cloneSets.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the CloneSet controller: %w", err)
	}
	statefulSets := &statefulset.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("statefulset-controller"),
		Engine: engine.New(mgr.GetClient(), nil, inPlace, withBudget, podWriter), AutoDeletePVC: gates.Enabled(StatefulSetAutoDeletePVC), OwnerIndexed: true,
		StartOrdinal: gates.Enabled(StatefulSetStartOrdinal), PodIndexLabel: gates.Enabled(PodIndexLabel),
		PreDownload: gates.Enabled(PreDownloadImageForInPlaceUpdate)}
	if err := statefulSets.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the Advanced StatefulSet controller: %w", err)
	}
	// Advanced DaemonSet pods carry the revision's hash, as DaemonSet pods do.
	daemonInPlace := inPlace
	daemonInPlace.ShortRevisionHash = true
	daemonSets := &daemonset.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("daemonset-controller"),
		Engine: engine.New(mgr.GetClient(), nil, daemonInPlace, withBudget, podWriter), OwnerIndexed: true, KeepUnselected: o.DaemonSetKeepUnselected,
		PreDownload: gates.Enabled(PreDownloadImageForDaemonSetUpdate)}
	if err := daemonSets.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the Advanced DaemonSet controller: %w", err)
	}
	if gates.Enabled(KruiseDaemon) {
		nodeImages := &nodeimage.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("nodeimage-controller")}
		if err := nodeImages.SetupWithManager(mgr, o.Workers); err != nil {
			return fmt.Errorf("set up the NodeImage controller: %w", err)
		}
		recreates := &crr.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("containerrecreaterequest-controller")}
		if err := recreates.SetupWithManager(mgr, o.Workers); err != nil {
			return fmt.Errorf("set up the ContainerRecreateRequest controller: %w", err)
		}
	}
	if gates.Enabled(ImagePullJobGate) { // off whenever KruiseDaemon is (cascade)
		pullJobs := &imagepulljob.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("imagepulljob-controller")}
		if err := pullJobs.SetupWithManager(mgr, o.Workers); err != nil {
			return fmt.Errorf("set up the ImagePullJob controller: %w", err)
		}
		pullLists := &imagelistpulljob.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("imagelistpulljob-controller")}
		if err := pullLists.SetupWithManager(mgr, o.Workers); err != nil {
			return fmt.Errorf("set up the ImageListPullJob controller: %w", err)
		}
	}
	broadcastJobs := &broadcastjob.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("broadcastjob-controller"), OwnerIndexed: true}
	if err := broadcastJobs.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the BroadcastJob controller: %w", err)
	}
	cronJobs := &advancedcronjob.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("advancedcronjob-controller")}
	if err := cronJobs.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the AdvancedCronJob controller: %w", err)
	}
	unitedDeployments := &uniteddeployment.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("uniteddeployment-controller"), OwnerIndexed: true}
	if err := unitedDeployments.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the UnitedDeployment controller: %w", err)
	}
	sidecarSets := &sidecarsetctl.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("sidecarset-controller"),
		Engine: engine.New(mgr.GetClient(), nil, inPlace, withBudget, podWriter), RevisionNamespace: o.Namespace,
		ExcludedNamespaces: excluded}
	if err := sidecarSets.SetupWithManager(ctx, mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the SidecarSet controller: %w", err)
	}
	injection := &sidecarinjection.Registrar{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("sidecarset-injection"),
		Configuration: install.SidecarInjectionConfiguration, Source: podSource, Namespace: o.Namespace, Live: mgr.GetAPIReader(),
		ExcludedNamespaces: excluded}
	if err := injection.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the SidecarSet injection registrar: %w", err)
	}
	budgets := &podunavailablebudget.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("podunavailablebudget-controller"), Finder: finder}
	if err := budgets.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the PodUnavailableBudget controller: %w", err)
	}
	protection := &budgetguard.Registrar{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("podunavailablebudget-protection"), Finder: finder, Configuration: install.BudgetProtectionConfiguration,
		Source: podSource, Namespace: o.Namespace, Live: mgr.GetAPIReader()}
	if err := protection.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the PodUnavailableBudget webhook registrar: %w", err)
	}
	if err := ppsctl.SetupWithManager(mgr, finder, o.Workers, o.Namespace); err != nil {
		return fmt.Errorf("set up the PersistentPodState controllers: %w", err)
	}
	persistence := &topologypin.Registrar{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("persistentpodstate-injection"), Configuration: install.PersistentPodStateConfiguration,
		Config: mgr.GetAPIReader(), Namespace: o.Namespace,
		Source: podSource, ExcludedNamespaces: excluded, Live: mgr.GetAPIReader()}
	if err := persistence.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the PersistentPodState webhook registrar: %w", err)
	}
	spreads := &workloadspread.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("workloadspread-controller"), Finder: finder}
	if err := spreads.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the WorkloadSpread controller: %w", err)
	}
	spreading := &spreadplacement.Registrar{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("workloadspread-registration"), Finder: finder, Configuration: install.WorkloadSpreadConfiguration,
		Source: podSource, Namespace: o.Namespace, Live: mgr.GetAPIReader(), PodWebhookPlaces: podWebhookPlaces}
	if err := spreading.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the WorkloadSpread webhook registrar: %w", err)
	}
	ephemeralJobs := &ephemeraljob.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("ephemeraljob-controller")}
	if err := ephemeralJobs.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the EphemeralJob controller: %w", err)
	}
	if gates.Enabled(SidecarTerminator) {
		terminator := &sidecarterminator.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("sidecarterminator-controller")}
		if err := terminator.SetupWithManager(mgr, o.Workers); err != nil {
			return fmt.Errorf("set up the SidecarTerminator controller: %w", err)
		}
	}
	if gates.Enabled(ResourceDistributionGate) {
		distributions := &resourcedistribution.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("resourcedistribution-controller")}
		if err := distributions.SetupWithManager(ctx, mgr, o.Workers); err != nil {
			return fmt.Errorf("set up the ResourceDistribution controller: %w", err)
		}
	}
	if gates.Enabled(PodProbeMarkerGate) { // off whenever KruiseDaemon is (cascade)
		if err := podprobemarker.Setup(ctx, mgr, mgr.GetEventRecorder("podprobemarker-controller"), o.Workers); err != nil {
			return fmt.Errorf("set up the PodProbeMarker controllers: %w", err)
		}
	}
	launches := &containerlaunchpriority.Reconciler{Client: mgr.GetClient(), Live: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("containerlaunchpriority-controller")}
	if err := launches.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the container launch priority controller: %w", err)
	}
	podReady := &podreadiness.Reconciler{Client: mgr.GetClient()}
	if err := podReady.SetupWithManager(mgr, o.Workers); err != nil {
		return fmt.Errorf("set up the pod readiness controller: %w", err)
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
// 100 to about 70 MB).
func cacheOptions() cache.Options {
	strip := cache.TransformStripManagedFields()
	pool := &cachetrim.Pool{}
	return cache.Options{
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
