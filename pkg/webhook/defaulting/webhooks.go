package defaulting

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/apis/apps/defaults"
	"github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	policydefaults "github.com/kruise-ng/kruise/apis/policy/defaults"
	policyv1alpha1 "github.com/kruise-ng/kruise/apis/policy/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// defaulter adapts a pure SetDefaults function to controller-runtime's Defaulter.
type defaulter[T runtime.Object] func(T)

// Default applies the defaults; the defaulting functions never fail.
func (f defaulter[T]) Default(_ context.Context, obj T) error {
	f(obj)
	return nil
}

// Each kind and version has its own webhook, matched exactly (matchPolicy Exact): a request is
// defaulted once, in the version it was made in, without a conversion round trip. The kinds without
// any default (ResourceDistribution, PodUnavailableBudget) have a webhook only to warn that nothing
// runs them yet; it fails open (failurePolicy Ignore), as a warning is all it adds.
//
// +kubebuilder:webhookconfiguration:mutating=true,name=kruise-mutating-webhook-configuration
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-advancedcronjob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=advancedcronjobs,verbs=create;update,versions=v1alpha1,name=madvancedcronjob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-advancedcronjob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=advancedcronjobs,verbs=create;update,versions=v1beta1,name=madvancedcronjob-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-broadcastjob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=broadcastjobs,verbs=create;update,versions=v1alpha1,name=mbroadcastjob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-broadcastjob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=broadcastjobs,verbs=create;update,versions=v1beta1,name=mbroadcastjob-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-cloneset,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=clonesets,verbs=create;update,versions=v1alpha1,name=mcloneset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=containerrecreaterequests,verbs=create;update,versions=v1alpha1,name=mcontainerrecreaterequest-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-daemonset,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=daemonsets,verbs=create;update,versions=v1alpha1,name=mdaemonset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-daemonset,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=daemonsets,verbs=create;update,versions=v1beta1,name=mdaemonset-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-ephemeraljob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=ephemeraljobs,verbs=create;update,versions=v1alpha1,name=mephemeraljob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-imagelistpulljob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagelistpulljobs,verbs=create;update,versions=v1alpha1,name=mimagelistpulljob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-imagelistpulljob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagelistpulljobs,verbs=create;update,versions=v1beta1,name=mimagelistpulljob-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-imagepulljob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagepulljobs,verbs=create;update,versions=v1alpha1,name=mimagepulljob-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-imagepulljob,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=imagepulljobs,verbs=create;update,versions=v1beta1,name=mimagepulljob-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-nodeimage,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=nodeimages,verbs=create;update,versions=v1alpha1,name=mnodeimage-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-nodeimage,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=nodeimages,verbs=create;update,versions=v1beta1,name=mnodeimage-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-nodepodprobe,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=nodepodprobes,verbs=create;update,versions=v1alpha1,name=mnodepodprobe-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-persistentpodstate,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=persistentpodstates,verbs=create;update,versions=v1alpha1,name=mpersistentpodstate-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-podprobemarker,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=podprobemarkers,verbs=create;update,versions=v1alpha1,name=mpodprobemarker-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-resourcedistribution,mutating=true,failurePolicy=ignore,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=resourcedistributions,verbs=create;update,versions=v1alpha1,name=mresourcedistribution-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-policy-kruise-io-v1alpha1-podunavailablebudget,mutating=true,failurePolicy=ignore,sideEffects=None,matchPolicy=Exact,groups=policy.kruise.io,resources=podunavailablebudgets,verbs=create;update,versions=v1alpha1,name=mpodunavailablebudget-v1alpha1.policy.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-sidecarset,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=sidecarsets,verbs=create;update,versions=v1alpha1,name=msidecarset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-sidecarset,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=sidecarsets,verbs=create;update,versions=v1beta1,name=msidecarset-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-statefulset,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=statefulsets,verbs=create;update,versions=v1alpha1,name=mstatefulset-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-statefulset,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=statefulsets,verbs=create;update,versions=v1beta1,name=mstatefulset-v1beta1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-uniteddeployment,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=uniteddeployments,verbs=create;update,versions=v1alpha1,name=muniteddeployment-v1alpha1.apps.kruise.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1alpha1-workloadspread,mutating=true,failurePolicy=fail,sideEffects=None,matchPolicy=Exact,groups=apps.kruise.io,resources=workloadspreads,verbs=create;update,versions=v1alpha1,name=mworkloadspread-v1alpha1.apps.kruise.io,admissionReviewVersions=v1

// Options tune the defaulting webhooks.
type Options struct {
	// TemplateDefaults defaults CloneSet and Advanced StatefulSet pod templates and claim templates
	// as OpenKruise does (defaults.SetDefaultsCloneSetTemplate, SetDefaultsStatefulSetTemplate and
	// SetDefaultsStatefulSetTemplateV1beta1); OpenKruise's TemplateNoDefaults gate turns it off.
	TemplateDefaults bool
	// HostNetworkHostPorts also defaults a hostNetwork template's host ports to its container ports
	// (OpenKruise's gate DefaultHostNetworkHostPortsInPodTemplates).
	HostNetworkHostPorts bool
	// GatedOff are the kinds (by the last part of their webhook path) whose controller a feature
	// gate turns off, with the gate: creating one, or changing its spec, is refused with 403 and
	// OpenKruise's words ("feature-gate X is not enabled"); other updates (labels, finalizers, the
	// status) pass, so that an object stored before the gate was turned off can still be deleted.
	GatedOff map[string]string
}

// Register adds every defaulting webhook to srv.
func Register(srv webhook.Server, scheme *runtime.Scheme, pods client.Reader, opts Options) {
	for _, h := range handlers(scheme, pods, opts) {
		var hd admission.Handler = h.webhook
		part := h.path[strings.LastIndexByte(h.path, '-')+1:]
		if gate, ok := opts.GatedOff[part]; ok {
			hd = refuseGatedOff(gate, h.webhook.Handler)
		}
		mount.Admission(srv, h.path, hd)
	}
}

// refuseGatedOff refuses creations and spec changes while gate is off, and answers everything
// else as next does.
func refuseGatedOff(gate string, next admission.Handler) admission.Handler {
	return admission.HandlerFunc(func(ctx context.Context, req admission.Request) admission.Response {
		changed, err := specChanged(req)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		if changed {
			return admission.Errored(http.StatusForbidden, fmt.Errorf("feature-gate %s is not enabled: kruise-manager runs no %s "+
				"while it is off (turn it on in kruise-manager's --feature-gates)", gate, req.Kind.Kind))
		}
		return next.Handle(ctx, req)
	})
}

// specChanged reports whether req creates an object or changes its spec.
func specChanged(req admission.Request) (bool, error) {
	switch req.Operation {
	case admissionv1.Create:
		return true, nil
	case admissionv1.Update:
	default:
		return false, nil
	}
	var old, obj struct {
		Spec json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
		return false, err
	}
	if err := json.Unmarshal(req.Object.Raw, &obj); err != nil {
		return false, err
	}
	var a, b any
	if len(old.Spec) > 0 {
		if err := json.Unmarshal(old.Spec, &a); err != nil {
			return false, err
		}
	}
	if len(obj.Spec) > 0 {
		if err := json.Unmarshal(obj.Spec, &b); err != nil {
			return false, err
		}
	}
	return !reflect.DeepEqual(a, b), nil
}

type handler struct {
	path    string
	webhook *admission.Webhook
}

func handlers(scheme *runtime.Scheme, pods client.Reader, opts Options) []handler {
	cloneSet := defaults.SetDefaultsCloneSet
	if opts.TemplateDefaults {
		cloneSet = func(obj *v1alpha1.CloneSet) {
			defaults.SetDefaultsCloneSet(obj)
			if opts.HostNetworkHostPorts {
				defaults.SetDefaultsHostNetworkPorts(&obj.Spec.Template.Spec)
			}
			defaults.SetDefaultsCloneSetTemplate(obj)
		}
	}
	statefulSet, statefulSetV1beta1 := defaults.SetDefaultsStatefulSet, defaults.SetDefaultsStatefulSetV1beta1
	if opts.TemplateDefaults {
		statefulSet = func(obj *v1alpha1.StatefulSet) {
			defaults.SetDefaultsStatefulSet(obj)
			if opts.HostNetworkHostPorts {
				defaults.SetDefaultsHostNetworkPorts(&obj.Spec.Template.Spec)
			}
			defaults.SetDefaultsStatefulSetTemplate(obj)
		}
		statefulSetV1beta1 = func(obj *v1beta1.StatefulSet) {
			defaults.SetDefaultsStatefulSetV1beta1(obj)
			if opts.HostNetworkHostPorts {
				defaults.SetDefaultsHostNetworkPorts(&obj.Spec.Template.Spec)
			}
			defaults.SetDefaultsStatefulSetTemplateV1beta1(obj)
		}
	}
	return []handler{
		{"/mutate-apps-kruise-io-v1alpha1-advancedcronjob", admission.WithDefaulter(scheme, defaulter[*v1alpha1.AdvancedCronJob](defaults.SetDefaultsAdvancedCronJob))},
		{"/mutate-apps-kruise-io-v1beta1-advancedcronjob", admission.WithDefaulter(scheme, defaulter[*v1beta1.AdvancedCronJob](defaults.SetDefaultsAdvancedCronJobV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-broadcastjob", admission.WithDefaulter(scheme, defaulter[*v1alpha1.BroadcastJob](defaults.SetDefaultsBroadcastJob))},
		{"/mutate-apps-kruise-io-v1beta1-broadcastjob", admission.WithDefaulter(scheme, defaulter[*v1beta1.BroadcastJob](defaults.SetDefaultsBroadcastJobV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-cloneset", admission.WithDefaulter(scheme, defaulter[*v1alpha1.CloneSet](cloneSet))},
		{"/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest", admission.WithDefaulter[*v1alpha1.ContainerRecreateRequest](scheme, crrDefaulter{pods: pods})},
		{"/mutate-apps-kruise-io-v1alpha1-daemonset", admission.WithDefaulter(scheme, defaulter[*v1alpha1.DaemonSet](defaults.SetDefaultsDaemonSet))},
		{"/mutate-apps-kruise-io-v1beta1-daemonset", admission.WithDefaulter(scheme, defaulter[*v1beta1.DaemonSet](defaults.SetDefaultsDaemonSetV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-ephemeraljob", admission.WithDefaulter(scheme, defaulter[*v1alpha1.EphemeralJob](defaults.SetDefaultsEphemeralJob))},
		{"/mutate-apps-kruise-io-v1alpha1-imagelistpulljob", admission.WithDefaulter(scheme, defaulter[*v1alpha1.ImageListPullJob](defaults.SetDefaultsImageListPullJob))},
		{"/mutate-apps-kruise-io-v1beta1-imagelistpulljob", admission.WithDefaulter(scheme, defaulter[*v1beta1.ImageListPullJob](defaults.SetDefaultsImageListPullJobV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-imagepulljob", admission.WithDefaulter(scheme, defaulter[*v1alpha1.ImagePullJob](defaults.SetDefaultsImagePullJob))},
		{"/mutate-apps-kruise-io-v1beta1-imagepulljob", admission.WithDefaulter(scheme, defaulter[*v1beta1.ImagePullJob](defaults.SetDefaultsImagePullJobV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-nodeimage", admission.WithDefaulter(scheme, defaulter[*v1alpha1.NodeImage](defaults.SetDefaultsNodeImage))},
		{"/mutate-apps-kruise-io-v1beta1-nodeimage", admission.WithDefaulter(scheme, defaulter[*v1beta1.NodeImage](defaults.SetDefaultsNodeImageV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-nodepodprobe", admission.WithDefaulter(scheme, defaulter[*v1alpha1.NodePodProbe](defaults.SetDefaultsNodePodProbe))},
		{"/mutate-apps-kruise-io-v1alpha1-persistentpodstate", admission.WithDefaulter(scheme, defaulter[*v1alpha1.PersistentPodState](defaults.SetDefaultsPersistentPodState))},
		{"/mutate-apps-kruise-io-v1alpha1-podprobemarker", admission.WithDefaulter(scheme, defaulter[*v1alpha1.PodProbeMarker](defaults.SetDefaultsPodProbeMarker))},
		{"/mutate-policy-kruise-io-v1alpha1-podunavailablebudget", admission.WithDefaulter(scheme, defaulter[*policyv1alpha1.PodUnavailableBudget](policydefaults.SetDefaultsPodUnavailableBudget))},
		{"/mutate-apps-kruise-io-v1alpha1-resourcedistribution", admission.WithDefaulter(scheme, defaulter[*v1alpha1.ResourceDistribution](func(*v1alpha1.ResourceDistribution) {}))},
		{"/mutate-apps-kruise-io-v1alpha1-sidecarset", admission.WithDefaulter(scheme, failingDefaulter[*v1alpha1.SidecarSet](defaultSidecarSet))},
		{"/mutate-apps-kruise-io-v1beta1-sidecarset", admission.WithDefaulter(scheme, failingDefaulter[*v1beta1.SidecarSet](defaultSidecarSetV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-statefulset", admission.WithDefaulter(scheme, defaulter[*v1alpha1.StatefulSet](statefulSet))},
		{"/mutate-apps-kruise-io-v1beta1-statefulset", admission.WithDefaulter(scheme, defaulter[*v1beta1.StatefulSet](statefulSetV1beta1))},
		{"/mutate-apps-kruise-io-v1alpha1-uniteddeployment", admission.WithDefaulter(scheme, defaulter[*v1alpha1.UnitedDeployment](defaults.SetDefaultsUnitedDeployment))},
		{"/mutate-apps-kruise-io-v1alpha1-workloadspread", admission.WithDefaulter(scheme, defaulter[*v1alpha1.WorkloadSpread](defaults.SetDefaultsWorkloadSpread))},
	}
}
