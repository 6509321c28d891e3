package sidecarinjection

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// RegisteredAnnotation is, on a SidecarSet, the generation whose selectors the API server uses to
// call the injection webhook: from the moment it shows a generation, every pod created that this
// generation selects gets its sidecars or is refused.
const RegisteredAnnotation = "apps.kruise.io/injection-registered-generation"

// Events of the registrar, on the SidecarSet.
const (
	ReasonRegistered    = "InjectionRegistered"
	ReasonNotRegistered = "InjectionNotRegistered"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-sidecarset-injection,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets,verbs=list;watch;patch

// Registrar keeps the injection entries of Configuration in line with the SidecarSets (Entries)
// and marks each SidecarSet once the API server has its entry (RegisteredAnnotation, and an
// event). It is the only writer of Configuration's webhooks; their endpoint and CA bundle are
// copied from the pod webhook (SourceWebhook) of Source, which the certificate rotator keeps
// current.
type Registrar struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Configuration is the MutatingWebhookConfiguration of the entries (installed empty).
	Configuration string
	// Source is the webhook whose client config is copied.
	Source registration.Source
	// ExcludedNamespaces never call the entries.
	ExcludedNamespaces []string
}

// SetupWithManager runs the registrar on the leader.
func (r *Registrar) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("sidecarset-injection").
		Watches(&v1beta1.SidecarSet{}, registration.EnqueueOne).
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, registration.EnqueueOne,
			registration.Named(r.Configuration, r.Source.Configuration)).
		Complete(r)
}

// Reconcile writes the entries when they differ from what is registered, and marks the
// SidecarSets whose registration the cache shows in place.
func (r *Registrar) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	base, err := r.Source.ClientConfig(ctx, r.Client)
	if err != nil || base == nil {
		return reconcile.Result{RequeueAfter: time.Second}, err
	}
	list := &v1beta1.SidecarSetList{}
	if err := r.Client.List(ctx, list); err != nil {
		return reconcile.Result{}, err
	}
	sets := make([]*v1beta1.SidecarSet, 0, len(list.Items))
	for i := range list.Items {
		sets = append(sets, &list.Items[i])
	}
	want, skipped := Entries(sets, EntryOptions{ClientConfig: *base, ExcludedNamespaces: r.ExcludedNamespaces})
	if wrote, err := registration.Mutating(ctx, r.Client, r.Configuration, want, "no SidecarSet is injected"); err != nil || wrote {
		return reconcile.Result{}, err // after a write, the cache shows it next and the SidecarSets are marked then
	}
	var errs []string
	for _, s := range sets {
		if err := r.mark(ctx, s, skipped[s.Name]); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return reconcile.Result{}, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return reconcile.Result{}, nil
}

// mark records on s that its registration (an entry, or none when skipped says why) is in place.
func (r *Registrar) mark(ctx context.Context, s *v1beta1.SidecarSet, skipped string) error {
	gen := strconv.FormatInt(s.Generation, 10)
	if s.Annotations[RegisteredAnnotation] == gen {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, RegisteredAnnotation, gen)
	if err := r.Client.Patch(ctx, s, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("mark SidecarSet %s registered: %w", s.Name, err)
	}
	if r.Recorder == nil {
		return nil
	}
	if skipped != "" {
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, ReasonNotRegistered, ReasonNotRegistered,
			"generation %s injects no pod: %s", gen, skipped)
		return nil
	}
	r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, ReasonRegistered, ReasonRegistered,
		"generation %s is registered (webhook %s): pods it selects get their sidecars from now on, or are refused while Kruise cannot be reached", gen, EntryName(s.Name))
	return nil
}
