package registration

import (
	"context"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Target is what every per-object registrar writes to and reads from: the configuration of its
// entries, the pod webhook (Source) whose endpoint and CA bundle they copy, the manager's namespace
// (the probe entry's), and a reader of the API server for objects whose admission added an entry
// that has been pending for long (Sync.Live); Recorder tells the objects' marks in events.
type Target struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Configuration is the configuration of the entries (installed empty).
	Configuration string
	Source        Source
	// Namespace is the manager's (the probe entry's).
	Namespace string
	Live      client.Reader
}

// EntriesFunc builds what a registrar writes for the objects of its kind (every object, those
// being deleted included: the kind decides what they still need), with base's endpoint and CA
// bundle: the entries, and why an object has none (by Key; nil: every object has one).
type EntriesFunc[W any] func(ctx context.Context, objs []client.Object, base admissionregistrationv1.WebhookClientConfig) ([]W, map[string]string, error)

// Registrar is the one reconcile of the per-object webhook registrars (SidecarSets, budgets,
// spreads, PersistentPodStates): it keeps the entries of Configuration in line with the objects of
// one kind (Entries), keeping those the objects' admissions added or need until it has seen those
// versions (Gate, Sync), and marks each object with the state of its current generation's entries
// (Marker), from which the kind's controller writes its condition. The entries' endpoint and CA
// bundle come from Source, which the certificate rotator keeps current. W is the configuration's
// webhook type: MutatingWebhook or ValidatingWebhook.
type Registrar[W any] struct {
	Target
	// List is an empty list of the kind.
	List    func() client.ObjectList
	Entries EntriesFunc[W]
	// Without says what is lost while the configuration is missing (Sync.Without).
	Without string
	Marker  Marker
	// MarkDeleting marks the objects being deleted too.
	MarkDeleting bool
	// Resync is how soon to look again when nothing else asks (0: on events only), for what the
	// entries copy from objects the registrar does not watch.
	Resync time.Duration
}

// Key is an object's key in the registrar's bookkeeping: namespace/name, or the name of a
// cluster-scoped object.
func Key(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// SetupWithManager runs the registrar, named name, on the leader: on any change of the kind's
// objects (object), of its configuration or of Source's, and of the extra kinds whose objects the
// entries copy from (targeted workloads).
func (r *Registrar[W]) SetupWithManager(mgr ctrl.Manager, name string, object client.Object, extra ...client.Object) error {
	b := ctrl.NewControllerManagedBy(mgr).Named(name).Watches(object, EnqueueOne)
	if kindOf[W]().name == mutating.name {
		b = b.Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, EnqueueOne, Named(r.Configuration, r.Source.Configuration))
	} else {
		b = b.Watches(&admissionregistrationv1.ValidatingWebhookConfiguration{}, EnqueueOne, Named(r.Configuration)).
			Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, EnqueueOne, Named(r.Source.Configuration))
	}
	for _, o := range extra {
		b = b.Watches(o, EnqueueOne)
	}
	return b.Complete(r)
}

// Reconcile writes the entries when they differ from what is registered, and marks the objects.
func (r *Registrar[W]) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	base, err := r.Source.ClientConfig(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	if base == nil { // the serving certificate is not there yet
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}
	list := r.List()
	if err := r.Client.List(ctx, list); err != nil {
		return reconcile.Result{}, err
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return reconcile.Result{}, err
	}
	objs := make([]client.Object, 0, len(items))
	marked := make([]client.Object, 0, len(items))
	seen := make(map[string]int64, len(items))
	for _, it := range items {
		o := it.(client.Object)
		objs = append(objs, o)
		seen[Key(o)] = o.GetGeneration()
		if r.MarkDeleting || o.GetDeletionTimestamp() == nil {
			marked = append(marked, o)
		}
	}
	want, skipped, err := r.Entries(ctx, objs, *base)
	if err != nil {
		return reconcile.Result{}, err
	}
	synced, err := sync(ctx, r.Client, kindOf[W](), Sync{Configuration: r.Configuration, Without: r.Without,
		Probe: ProbeEntry{ClientConfig: *base, Namespace: r.Namespace},
		Seen:  seen,
		Live:  LiveGeneration(r.Live, r.List)}, want)
	var noEntry func(client.Object) string
	if skipped != nil {
		noEntry = func(o client.Object) string { return skipped[Key(o)] }
	}
	return r.Marker.After(ctx, marked, synced, err, noEntry, reconcile.Result{RequeueAfter: r.Resync})
}
