package manager

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

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
	"github.com/kruise-ng/kruise/pkg/controller/persistentpodstate"
	"github.com/kruise-ng/kruise/pkg/controller/podprobemarker"
	"github.com/kruise-ng/kruise/pkg/controller/podreadiness"
	"github.com/kruise-ng/kruise/pkg/controller/podunavailablebudget"
	"github.com/kruise-ng/kruise/pkg/controller/resourcedistribution"
	"github.com/kruise-ng/kruise/pkg/controller/sidecarset"
	"github.com/kruise-ng/kruise/pkg/controller/sidecarterminator"
	"github.com/kruise-ng/kruise/pkg/controller/statefulset"
	"github.com/kruise-ng/kruise/pkg/controller/uniteddeployment"
	"github.com/kruise-ng/kruise/pkg/controller/workloadspread"
	"github.com/kruise-ng/kruise/pkg/core/inplace"
	"github.com/kruise-ng/kruise/pkg/machinery/engine"
	"github.com/kruise-ng/kruise/pkg/machinery/podcontrol"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadfinder"
	"github.com/kruise-ng/kruise/pkg/machinery/workloadloop"
	"github.com/kruise-ng/kruise/pkg/platform/openkruisemetrics"
	"github.com/kruise-ng/kruise/pkg/webhook/budgetguard"
	"github.com/kruise-ng/kruise/pkg/webhook/callers"
	"github.com/kruise-ng/kruise/pkg/webhook/certs"
	"github.com/kruise-ng/kruise/pkg/webhook/conversionhub"
	"github.com/kruise-ng/kruise/pkg/webhook/decider"
	"github.com/kruise-ng/kruise/pkg/webhook/defaulting"
	"github.com/kruise-ng/kruise/pkg/webhook/deletionprotection"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
	"github.com/kruise-ng/kruise/pkg/webhook/sidecarinjection"
	"github.com/kruise-ng/kruise/pkg/webhook/spreadplacement"
	"github.com/kruise-ng/kruise/pkg/webhook/topologypin"
	"github.com/kruise-ng/kruise/pkg/webhook/validating"
)

// component is one thing kruise-manager runs: a webhook handler (served by every replica), a
// controller or a webhook registrar (run by the leader), with its setup and, for those a feature
// gate switches, when it runs.
type component struct {
	name    string
	enabled func(*wiring) bool
	setup   func(*wiring) error
}

// components is what kruise-manager runs, in the order it is set up: the webhook handlers first
// (the budget guard before what asks it; the pod webhooks before the controllers whose pods they
// admit), then the pod index the workload controllers read through, then the controllers and the
// registrars of the objects with webhook entries of their own.
var components = []component{
	{"OpenKruise's leadership metric", nil, setupLeaderMetric},
	{"the defaulting webhooks", nil, setupDefaulting},
	{"the registration probe", nil, func(w *wiring) error { registration.ServeProbe(w.mgr.GetWebhookServer()); return nil }},
	{"the validating webhooks", nil, setupValidating},
	{"the deletion protection webhook", nil, setupDeletionProtection},
	{"the PodUnavailableBudget webhook", nil, setupBudgetGuard},
	{"the ContainerRecreateRequest webhook", nil, setupRecreateRequests},
	{"the PersistentPodState pod webhook", nil, func(w *wiring) error {
		topologypin.Register(w.mgr.GetWebhookServer(), w.scheme, &topologypin.Handler{Reader: w.mgr.GetClient(), Live: w.mgr.GetAPIReader()})
		return nil
	}},
	{"the pod webhook and WorkloadSpread placement", nil, setupPodMutation},
	{"the SidecarSet injection webhook", nil, func(w *wiring) error {
		sidecarinjection.Register(w.mgr.GetWebhookServer(), w.scheme, &sidecarinjection.Handler{
			Reader: w.mgr.GetClient(), Live: w.mgr.GetAPIReader(), RevisionNamespace: w.o.Namespace})
		return nil
	}},
	// Conversion between v1alpha1 and v1beta1 (the hub) for the kinds whose schemas differ.
	{"the conversion webhook", nil, func(w *wiring) error {
		h, err := conversionhub.Handler(w.scheme)
		if err != nil {
			return err
		}
		mount.HTTP(w.mgr.GetWebhookServer(), install.ConversionPath, h)
		return nil
	}},
	{"the in-place engine's writers", nil, setupEngineOptions},
	{"the index of pods and revisions by controller", nil, func(w *wiring) error { return podcontrol.IndexOwned(w.ctx, w.mgr.GetFieldIndexer()) }},
	{"the CloneSet controller", nil, setupCloneSets},
	{"the Advanced StatefulSet controller", nil, setupStatefulSets},
	{"the Advanced DaemonSet controller", nil, setupDaemonSets},
	{"the NodeImage controller", when(KruiseDaemon), func(w *wiring) error {
		return (&nodeimage.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("nodeimage-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the ContainerRecreateRequest controller", when(KruiseDaemon), func(w *wiring) error {
		return (&crr.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("containerrecreaterequest-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	// ImagePullJobGate is off whenever KruiseDaemon is (cascade).
	{"the ImagePullJob controller", when(ImagePullJobGate), func(w *wiring) error {
		return (&imagepulljob.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("imagepulljob-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the ImageListPullJob controller", when(ImagePullJobGate), func(w *wiring) error {
		return (&imagelistpulljob.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("imagelistpulljob-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the BroadcastJob controller", nil, func(w *wiring) error {
		return (&broadcastjob.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("broadcastjob-controller"), OwnerIndexed: true}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the AdvancedCronJob controller", nil, func(w *wiring) error {
		return (&advancedcronjob.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("advancedcronjob-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the UnitedDeployment controller", nil, func(w *wiring) error {
		return (&uniteddeployment.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("uniteddeployment-controller"), OwnerIndexed: true}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the SidecarSet controller", nil, func(w *wiring) error {
		return (&sidecarset.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("sidecarset-controller"),
			Engine: w.engine(w.inPlace), RevisionNamespace: w.o.Namespace, ExcludedNamespaces: w.excluded}).SetupWithManager(w.ctx, w.mgr, w.o.Workers)
	}},
	{"the SidecarSet injection registrar", nil, func(w *wiring) error {
		return (&sidecarinjection.Registrar{Target: w.target(install.SidecarInjectionConfiguration, "sidecarset-injection"),
			ExcludedNamespaces: w.excluded}).SetupWithManager(w.mgr)
	}},
	{"the PodUnavailableBudget controller", nil, func(w *wiring) error {
		return (&podunavailablebudget.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("podunavailablebudget-controller"), Finder: w.finder}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the PodUnavailableBudget webhook registrar", nil, func(w *wiring) error {
		return (&budgetguard.Registrar{Target: w.target(install.BudgetProtectionConfiguration, "podunavailablebudget-protection"),
			Finder: w.finder}).SetupWithManager(w.mgr)
	}},
	{"the PersistentPodState controllers", nil, func(w *wiring) error {
		return persistentpodstate.SetupWithManager(w.mgr, w.finder, w.o.Workers, w.o.Namespace)
	}},
	{"the PersistentPodState webhook registrar", nil, func(w *wiring) error {
		return (&topologypin.Registrar{Target: w.target(install.PersistentPodStateConfiguration, "persistentpodstate-injection"),
			Config: w.mgr.GetAPIReader(), ExcludedNamespaces: w.excluded}).SetupWithManager(w.mgr)
	}},
	{"the WorkloadSpread controller", nil, func(w *wiring) error {
		return (&workloadspread.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("workloadspread-controller"), Finder: w.finder}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the WorkloadSpread webhook registrar", nil, func(w *wiring) error {
		return (&spreadplacement.Registrar{Target: w.target(install.WorkloadSpreadConfiguration, "workloadspread-registration"),
			Finder: w.finder, PodWebhookPlaces: w.podWebhookPlaces}).SetupWithManager(w.mgr)
	}},
	{"the EphemeralJob controller", nil, func(w *wiring) error {
		return (&ephemeraljob.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("ephemeraljob-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the SidecarTerminator controller", when(SidecarTerminator), func(w *wiring) error {
		return (&sidecarterminator.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("sidecarterminator-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the ResourceDistribution controller", when(ResourceDistributionGate), func(w *wiring) error {
		return (&resourcedistribution.Reconciler{Client: w.mgr.GetClient(), Recorder: w.recorder("resourcedistribution-controller")}).SetupWithManager(w.ctx, w.mgr, w.o.Workers)
	}},
	// PodProbeMarkerGate is off whenever KruiseDaemon is (cascade).
	{"the PodProbeMarker controllers", when(PodProbeMarkerGate), func(w *wiring) error {
		return podprobemarker.Setup(w.ctx, w.mgr, w.recorder("podprobemarker-controller"), w.o.Workers)
	}},
	{"the container launch priority controller", nil, func(w *wiring) error {
		return (&containerlaunchpriority.Reconciler{Client: w.mgr.GetClient(), Live: w.mgr.GetAPIReader(),
			Recorder: w.recorder("container-launch-priority-controller")}).SetupWithManager(w.mgr, w.o.Workers)
	}},
	{"the pod readiness controller", nil, func(w *wiring) error {
		return (&podreadiness.Reconciler{Client: w.mgr.GetClient()}).SetupWithManager(w.mgr, w.o.Workers)
	}},
}

// when is a component's condition: feature gate f on.
func when(f Feature) func(*wiring) bool { return func(w *wiring) bool { return w.gates.Enabled(f) } }

// wiring is what the components share: the manager and its options, and the parts several of
// them use (set by the components that make them, in the table's order).
type wiring struct {
	ctx     context.Context
	o       Options
	mgr     ctrl.Manager
	scheme  *runtime.Scheme
	cfg     *rest.Config
	gates   FeatureGates
	inPlace inplace.Options
	log     logr.Logger

	finder     *workloadfinder.Finder
	admissions registration.Admission
	// podSource is where the entries of objects with webhook entries of their own take their
	// client configuration from: the pod webhook's.
	podSource registration.Source
	// excluded are the namespaces whose pods never call the pod webhooks.
	excluded []string
	// podWebhookPlaces reports whether the pod webhook places a namespace's pods in their spread
	// (where it fails closed as the spreads' entries do).
	podWebhookPlaces func(namespace string) bool

	guard         *budgetguard.Handler // setupBudgetGuard
	engineOptions []engine.Option      // setupEngineOptions
}

func newWiring(ctx context.Context, o Options, mgr ctrl.Manager, scheme *runtime.Scheme, cfg *rest.Config, gates FeatureGates,
	inPlace inplace.Options, log logr.Logger) *wiring {
	excluded := o.podWebhookExcluded()
	return &wiring{ctx: ctx, o: o, mgr: mgr, scheme: scheme, cfg: cfg, gates: gates, inPlace: inPlace, log: log,
		finder:     &workloadfinder.Finder{Reader: mgr.GetClient(), Scales: mgr.GetClient()},
		admissions: registration.Admission{Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Namespace: o.Namespace},
		podSource:  registration.Source{Configuration: MutatingWebhookConfiguration, Webhook: podmutation.WebhookName},
		excluded:   excluded,
		podWebhookPlaces: func(namespace string) bool {
			return o.PodWebhookFailurePolicy == string(admissionregistrationv1.Fail) && !slices.Contains(excluded, namespace)
		},
	}
}

func (w *wiring) recorder(name string) events.EventRecorder { return w.mgr.GetEventRecorder(name) }

// target is what a per-object registrar of configuration writes with: the manager's clients, its
// namespace, the pod webhook as source and the events of recorder.
func (w *wiring) target(configuration, recorder string) registration.Target {
	return registration.Target{Client: w.mgr.GetClient(), Recorder: w.recorder(recorder), Configuration: configuration,
		Source: w.podSource, Namespace: w.o.Namespace, Live: w.mgr.GetAPIReader()}
}

// engine is an in-place engine of options opts that asks the budgets and writes pods cheaply.
func (w *wiring) engine(opts inplace.Options) engine.Engine {
	return engine.New(w.mgr.GetClient(), nil, opts, w.engineOptions...)
}

func setupDefaulting(w *wiring) error {
	defaulting.Register(w.mgr.GetWebhookServer(), w.scheme, w.mgr.GetAPIReader(), defaulting.Options{
		TemplateDefaults:     !w.gates.Enabled(TemplateNoDefaults),
		HostNetworkHostPorts: w.gates.Enabled(DefaultHostNetworkHostPortsInPodTemplates), GatedOff: gatedOffKinds(w.gates)})
	return nil
}

// setupValidating registers the validating webhooks; the admissions of the objects that get webhook
// entries of their own register those entries before the API server stores the objects
// (registration.Admission, confirmed by the probe entries), each kind capped per namespace so that
// one tenant does not fill the configurations every namespace shares (SidecarSets are
// cluster-scoped: their authors are the cluster's administrators).
func setupValidating(w *wiring) error {
	reader := w.mgr.GetClient()
	budgetGate := budgetguard.NewGate(w.admissions, install.BudgetProtectionConfiguration, w.podSource, reader, w.finder)
	spreadGate := spreadplacement.NewGate(w.admissions, install.WorkloadSpreadConfiguration, w.podSource, reader, w.finder, w.podWebhookPlaces)
	ppsGate := topologypin.NewGate(topologypin.GateOptions{Admission: w.admissions, Configuration: install.PersistentPodStateConfiguration,
		Source: w.podSource, Reader: reader, Config: w.mgr.GetAPIReader(), Namespace: w.o.Namespace, ExcludedNamespaces: w.excluded})
	budgetGate.PerNamespace, spreadGate.PerNamespace, ppsGate.PerNamespace =
		w.o.MaxEntryObjectsPerNamespace, w.o.MaxEntryObjectsPerNamespace, w.o.MaxEntryObjectsPerNamespace
	gates := validating.Gates{
		SidecarSet:         sidecarinjection.NewGate(w.admissions, install.SidecarInjectionConfiguration, w.podSource, reader, w.excluded),
		Budget:             budgetGate,
		WorkloadSpread:     spreadGate,
		PersistentPodState: ppsGate,
	}
	validating.Register(w.mgr.GetWebhookServer(), w.scheme, validating.DryRunPodChecker{Client: reader}, reader,
		validating.SidecarSetOptions{Reader: reader, Config: w.mgr.GetAPIReader(), Namespace: w.o.Namespace,
			PatchDefaultsAllowed: w.gates.Enabled(SidecarSetPatchPodMetadataDefaultsAllowed)}, reader,
		validating.ResourceDistributionOptions{Reader: reader, Live: w.mgr.GetAPIReader(), DryRun: reader, Namespace: w.o.Namespace},
		gates, accessChecker(w.o, w.mgr))
	return nil
}

func setupDeletionProtection(w *wiring) error {
	return deletionprotection.Register(w.mgr.GetWebhookServer(), deletionprotection.Options{Enabled: w.gates.Enabled(ResourcesDeletionProtection),
		Policy: deletionprotection.Policy{CRDCascading: w.gates.Enabled(DeletionProtectionForCRDCascadingGate)}, Reader: w.mgr.GetClient(), Config: w.cfg})
}

// setupBudgetGuard registers the budgets' admission of deletions, evictions, updates and resizes;
// the in-place engine and the ContainerRecreateRequest webhook ask the same guard.
func setupBudgetGuard(w *wiring) error {
	w.guard = &budgetguard.Handler{Reader: w.mgr.GetClient(), Live: w.mgr.GetAPIReader(), Writer: w.mgr.GetClient(), Finder: w.finder,
		Recorder: w.recorder("podunavailablebudget-webhook"), Off: map[policyv1alpha1.PubOperation]bool{
			policyv1alpha1.PubDeleteOperation: !w.gates.Enabled(PodUnavailableBudgetDeleteGate),
			policyv1alpha1.PubEvictOperation:  !w.gates.Enabled(PodUnavailableBudgetDeleteGate),
			policyv1alpha1.PubUpdateOperation: !w.gates.Enabled(PodUnavailableBudgetUpdateGate),
			policyv1alpha1.PubResizeOperation: !w.gates.Enabled(PodUnavailableBudgetUpdateGate)},
		ResizeIsUpdate: !w.gates.Enabled(InPlacePodVerticalScaling)}
	budgetguard.Register(w.mgr.GetWebhookServer(), w.scheme, w.guard)
	return nil
}

func setupRecreateRequests(w *wiring) error {
	validating.RegisterContainerRecreateRequests(w.mgr.GetWebhookServer(), w.scheme,
		validating.ContainerRecreateRequestOptions{Access: accessChecker(w.o, w.mgr), Pods: w.mgr.GetClient(), Budget: w.guard})
	return nil
}

// setupPodMutation registers the WorkloadSpreads' pod admission and the pod webhook, which places
// a pod in its spread in the same call where it fails closed as the spreads' entries do; the
// leader answers the spreads' pod admissions from memory, the other replicas pass theirs on.
func setupPodMutation(w *wiring) error {
	spreads := &spreadplacement.Handler{Reader: w.mgr.GetClient(), Live: w.mgr.GetAPIReader(),
		Writer: w.mgr.GetClient(), Finder: w.finder, Recorder: w.recorder("workloadspread-webhook")}
	dns, _ := w.o.webhookNames()
	decides := &decider.Decider{Client: w.mgr.GetClient(), Reader: w.mgr.GetAPIReader(), Namespace: w.o.Namespace,
		Address: w.o.advertiseAddress(), ServerName: dns[0], Log: w.log.WithName("decider"), OnStop: []func(context.Context){spreads.Flush},
		ClientCertificate: callers.FileCertificate(filepath.Join(w.o.CertDir, certs.CertFile), filepath.Join(w.o.CertDir, certs.KeyFile)),
		CA: func(ctx context.Context) ([]byte, error) {
			cc, err := w.podSource.ClientConfig(ctx, w.mgr.GetClient())
			if err != nil || cc == nil {
				return nil, fmt.Errorf("no CA bundle yet: %w", err)
			}
			return cc.CABundle, nil
		}}
	if err := w.mgr.Add(decides); err != nil {
		return err
	}
	spreads.Decider = decides
	spreadplacement.Register(w.mgr.GetWebhookServer(), w.scheme, spreads)
	if w.o.PodWebhookFailurePolicy == string(admissionregistrationv1.Fail) {
		podmutation.Register(w.mgr.GetWebhookServer(), w.scheme, spreads)
	} else {
		podmutation.Register(w.mgr.GetWebhookServer(), w.scheme, nil)
	}
	return nil
}

// setupEngineOptions: in-place updates ask the budgets before they take a pod out of service (B2
// of issue 18), the engine's pod writes skip decoding the API server's answers, and what is learned
// of each node's kubelet (how long to wait for it to report a pod not Ready) is shared by the
// engines of every workload.
func setupEngineOptions(w *wiring) error {
	core, err := kubernetes.NewForConfigAndClient(w.mgr.GetConfig(), w.mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	kubelets := engine.NewKubelets(w.mgr.GetClient(), w.recorder("inplace-update"), inplace.DefaultKubeletPolicy())
	w.engineOptions = []engine.Option{engine.WithBudget(w.guard), engine.WithPodWriter(core.CoreV1().RESTClient()), engine.WithKubelets(kubelets)}
	return nil
}

func setupCloneSets(w *wiring) error {
	// CloneSet pods carry pod-template-hash, and with CloneSetShortHash the revision's hash alone.
	opts := w.inPlace
	opts.PodTemplateHash, opts.ShortRevisionHash = true, w.gates.Enabled(CloneSetShortHash)
	return (&cloneset.Reconciler{Base: w.workloadBase("cloneset-controller", opts, PreDownloadImageForInPlaceUpdate), Scheme: w.scheme,
		PartitionRollback:       w.gates.Enabled(CloneSetPartitionRollback),
		RecreateOnClaimChange:   w.gates.Enabled(RecreatePodWhenChangeVCTInCloneSetGate),
		PreparingUpdateAsUpdate: w.gates.Enabled(PreparingUpdateAsUpdate), ScalingExcludePreparingDelete: w.o.CloneSetScalingExcludePreparingDelete,
	}).SetupWithManager(w.mgr, w.o.Workers)
}

func setupStatefulSets(w *wiring) error {
	return (&statefulset.Reconciler{Base: w.workloadBase("statefulset-controller", w.inPlace, PreDownloadImageForInPlaceUpdate),
		AutoDeletePVC: w.gates.Enabled(StatefulSetAutoDeletePVC), StartOrdinal: w.gates.Enabled(StatefulSetStartOrdinal),
		PodIndexLabel: w.gates.Enabled(PodIndexLabel)}).SetupWithManager(w.mgr, w.o.Workers)
}

func setupDaemonSets(w *wiring) error {
	// Advanced DaemonSet pods carry the revision's hash, as DaemonSet pods do.
	opts := w.inPlace
	opts.ShortRevisionHash = true
	return (&daemonset.Reconciler{Base: w.workloadBase("daemonset-controller", opts, PreDownloadImageForDaemonSetUpdate),
		KeepUnselected: w.o.DaemonSetKeepUnselected}).SetupWithManager(w.mgr, w.o.Workers)
}

// workloadBase is what the pod workloads' reconcilers share: the manager's client, an event
// recorder named as OpenKruise's controller, an engine with opts, the owner index, and the
// pre-download gate.
func (w *wiring) workloadBase(recorder string, opts inplace.Options, preDownload Feature) workloadloop.Base {
	return workloadloop.Base{Client: w.mgr.GetClient(), Recorder: w.recorder(recorder), Engine: w.engine(opts), OwnerIndexed: true,
		PreDownload: w.gates.Enabled(preDownload)}
}

// setupLeaderMetric sets kruise_manager_is_leader (OpenKruise's): 0 until this replica is elected,
// then 1 (a replica that loses the lease exits).
func setupLeaderMetric(w *wiring) error {
	openkruisemetrics.SetLeader(false)
	return w.mgr.Add(leaderOnly(func(ctx context.Context) error {
		openkruisemetrics.SetLeader(true)
		<-ctx.Done()
		return nil
	}))
}

// leaderOnly is a runnable the manager starts once this replica leads.
type leaderOnly func(ctx context.Context) error

func (f leaderOnly) Start(ctx context.Context) error { return f(ctx) }
func (leaderOnly) NeedLeaderElection() bool          { return true }
