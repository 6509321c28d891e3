package registration

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-ng/kruise/pkg/core/registrationmark"
)

// Marker marks the objects behind a registrar's entries with the state of their current
// generation's registration (registrationmark.Keys), from which each kind's controller writes its
// registration condition, and tells it in an event on the object.
type Marker struct {
	Client   client.Client
	Recorder events.EventRecorder
	Keys     registrationmark.Keys
	// Registered and NotRegistered are the events' reasons.
	Registered, NotRegistered string
	// Says are the events' messages, each given the generation as %s: Registered once the API
	// server has the entries, Lost (then why) while they cannot be written, NoEntry (then why)
	// when the generation needs none.
	Says struct{ Registered, Lost, NoEntry string }
}

// After marks objects after a registrar's sync returned synced and err: while the entries cannot
// be written, every object not registered yet says why (the entries its admission added still
// hold); once the registrar's view is in place (the sync wrote nothing), every object is marked
// registered, noEntry(object) saying why it needs no entry (nil: all need one). It returns what
// the registrar's Reconcile returns, next being its result when all went well.
func (m Marker) After(ctx context.Context, objects []client.Object, synced Synced, err error,
	noEntry func(client.Object) string, next reconcile.Result) (reconcile.Result, error) {
	if err != nil && !apierrors.IsConflict(err) {
		why := m.lost(err)
		return reconcile.Result{}, errors.Join(err, m.markAll(ctx, objects, func(client.Object) (bool, string) { return false, why }))
	}
	if err != nil || synced.Wrote {
		return reconcile.Result{}, err // after a write, the cache shows it next and the objects are marked then
	}
	if err := m.markAll(ctx, objects, func(o client.Object) (bool, string) {
		if noEntry == nil {
			return true, ""
		}
		return true, noEntry(o)
	}); err != nil {
		return reconcile.Result{}, err
	}
	if synced.Pending > 0 && (next.RequeueAfter == 0 || next.RequeueAfter > PendingTTL) {
		next.RequeueAfter = PendingTTL
	}
	return next, nil
}

func (m Marker) lost(err error) string {
	return "the webhook entries cannot be written: " + err.Error()
}

// markAll marks every object with state's answer for it.
func (m Marker) markAll(ctx context.Context, objects []client.Object, state func(client.Object) (registered bool, why string)) error {
	var errs []error
	for _, o := range objects {
		registered, why := state(o)
		errs = append(errs, m.mark(ctx, o, registered, why))
	}
	return errors.Join(errs...)
}

// mark writes the marks of o (registrationmark.Keys.Patch) and tells them.
func (m Marker) mark(ctx context.Context, o client.Object, registered bool, why string) error {
	patch := m.Keys.Patch(o, registered, why)
	if patch == nil {
		return nil
	}
	if err := m.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("mark %s registered: %w", client.ObjectKeyFromObject(o), err)
	}
	if m.Recorder == nil {
		return nil
	}
	gen := strconv.FormatInt(o.GetGeneration(), 10)
	switch {
	case !registered:
		m.Recorder.Eventf(o, nil, corev1.EventTypeWarning, m.NotRegistered, m.NotRegistered, m.Says.Lost, gen, why)
	case why != "":
		m.Recorder.Eventf(o, nil, corev1.EventTypeNormal, m.NotRegistered, m.NotRegistered, m.Says.NoEntry, gen, why)
	default:
		m.Recorder.Eventf(o, nil, corev1.EventTypeNormal, m.Registered, m.Registered, m.Says.Registered, gen)
	}
	return nil
}
