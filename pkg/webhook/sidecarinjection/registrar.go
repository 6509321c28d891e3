package sidecarinjection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
	"github.com/kruise-ng/kruise/pkg/sidecarset"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// Events of the registrar, on the SidecarSet.
const (
	ReasonRegistered    = "InjectionRegistered"
	ReasonNotRegistered = "InjectionNotRegistered"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kruise-sidecarset-injection,verbs=update
// +kubebuilder:rbac:groups=apps.kruise.io,resources=sidecarsets,verbs=list;watch;patch

// Registrar keeps the injection entries of Configuration in line with the SidecarSets (Entries),
// taking over those the SidecarSets' admissions added (Gate), and marks each SidecarSet with the
// state of its current generation's entry (sidecarset.RegisteredAnnotation once the API server
// has it, sidecarset.NotRegisteredAnnotation while it has none, with an event), from which the
// SidecarSet controller writes the InjectionRegistered condition. Beside the admissions' pending
// entries, it is the only writer of Configuration's webhooks; their endpoint and CA bundle are
// copied from the pod webhook of Source, which the certificate rotator keeps current.
type Registrar struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Configuration is the MutatingWebhookConfiguration of the entries (installed empty).
	Configuration string
	// Source is the webhook whose client config is copied.
	Source registration.Source
	// ExcludedNamespaces never call the entries.
	ExcludedNamespaces []string
	// Namespace is the manager's (the probe entry's).
	Namespace string
	// Live reads a SidecarSet from the API server when an entry its admission added has been
	// pending for long (registration.Sync.Live).
	Live client.Reader
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
	seen := make(map[string]int64, len(list.Items))
	for i := range list.Items {
		sets = append(sets, &list.Items[i])
		seen[list.Items[i].Name] = list.Items[i].Generation
	}
	want, skipped := Entries(sets, EntryOptions{ClientConfig: *base, ExcludedNamespaces: r.ExcludedNamespaces})
	synced, err := registration.SyncMutating(ctx, r.Client, registration.Sync{Configuration: r.Configuration,
		Without: "no SidecarSet is injected", Probe: registration.ProbeEntry{ClientConfig: *base, Namespace: r.Namespace},
		Seen: seen, Live: registration.LiveGeneration(r.Live, func() client.ObjectList { return &v1beta1.SidecarSetList{} })}, want)
	if err != nil && !apierrors.IsConflict(err) {
		// The SidecarSets not registered yet say why; their admissions' entries still hold.
		why := "the injection webhook entries cannot be written: " + err.Error()
		if len(why) > maxReason {
			why = why[:maxReason] + "…"
		}
		return reconcile.Result{}, errors.Join(err, r.markAll(ctx, sets, func(*v1beta1.SidecarSet) (bool, string) { return false, why }))
	}
	if err != nil || synced.Wrote {
		return reconcile.Result{}, err // after a write, the cache shows it next and the SidecarSets are marked then
	}
	if err := r.markAll(ctx, sets, func(s *v1beta1.SidecarSet) (bool, string) { return true, skipped[s.Name] }); err != nil {
		return reconcile.Result{}, err
	}
	if synced.Pending > 0 {
		return reconcile.Result{RequeueAfter: registration.PendingTTL}, nil
	}
	return reconcile.Result{}, nil
}

// maxReason bounds the reason NotRegisteredAnnotation carries.
const maxReason = 512

// markAll marks every SidecarSet with state's answer for it.
func (r *Registrar) markAll(ctx context.Context, sets []*v1beta1.SidecarSet, state func(*v1beta1.SidecarSet) (registered bool, why string)) error {
	var errs []error
	for _, s := range sets {
		registered, why := state(s)
		errs = append(errs, r.mark(ctx, s, registered, why))
	}
	return errors.Join(errs...)
}

// mark records on s the state of its current generation's registration: registered says the API
// server has it (an entry, or none when why says why there is none); otherwise why says what
// keeps it from being registered, and RegisteredAnnotation keeps the last generation registered.
func (r *Registrar) mark(ctx context.Context, s *v1beta1.SidecarSet, registered bool, why string) error {
	gen := strconv.FormatInt(s.Generation, 10)
	have := s.Annotations[sidecarset.RegisteredAnnotation]
	if (have == gen) == registered && s.Annotations[sidecarset.NotRegisteredAnnotation] == why {
		return nil
	}
	if !registered && have == gen {
		return nil // registered before; a later write failing takes nothing from it
	}
	annotations := map[string]any{sidecarset.NotRegisteredAnnotation: nil}
	if why != "" {
		annotations[sidecarset.NotRegisteredAnnotation] = why
	}
	if registered {
		annotations[sidecarset.RegisteredAnnotation] = gen
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, s, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("mark SidecarSet %s registered: %w", s.Name, err)
	}
	if r.Recorder == nil {
		return nil
	}
	switch {
	case !registered:
		r.Recorder.Eventf(s, nil, corev1.EventTypeWarning, ReasonNotRegistered, ReasonNotRegistered,
			"generation %s is not registered: %s; pods it selects are not sent to Kruise", gen, why)
	case why != "":
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, ReasonNotRegistered, ReasonNotRegistered,
			"generation %s injects no pod: %s", gen, why)
	default:
		r.Recorder.Eventf(s, nil, corev1.EventTypeNormal, ReasonRegistered, ReasonRegistered,
			"generation %s is registered (webhook %s): pods it selects get their sidecars, or are refused while Kruise cannot be reached", gen, EntryName(s.Name))
	}
	return nil
}
