package imagepuller

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// The daemon's permissions for pulling, generated into config/rbac/daemon by `make generate`:
// its NodeImage and its status, and the pull secrets the manager copies into kruise-daemon-config.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodeimages,verbs=list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=nodeimages/status,verbs=patch
// +kubebuilder:rbac:groups="",namespace=kruise-daemon-config,resources=secrets,verbs=get

// Puller runs the pull tasks of one node.
type Puller struct {
	// Images is the runtime's image service.
	Images ImageService
	// Secrets reads pull secrets (uncached: the daemon may only get them, one by one).
	Secrets client.Reader
	// Node is the daemon's node, the name of its NodeImage.
	Node string
	// Workers caps the pulls running at once.
	Workers int
	Log     logr.Logger

	mu    sync.Mutex
	tasks map[Key]*task
	sem   chan struct{}
	dirty chan struct{}
	// written is the status last written (only Run's goroutine touches it).
	written *v1beta1.NodeImageStatus
}

// Key names a pull task: an image name (without tag) and a tag.
type Key struct{ Name, Tag string }

// Ref is the image reference the task pulls.
func (k Key) Ref() string { return k.Name + ":" + k.Tag }

type task struct {
	cancel  context.CancelFunc
	st      state
	secrets []v1beta1.NodeImageReferenceObject
}

var (
	pullsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kruise_daemon_image_pulls_total",
		Help: "Image pull tasks finished by kruise-daemon, by result (succeeded, failed)."}, []string{"result"})
	pullSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kruise_daemon_image_pull_duration_seconds",
		Help: "Time from the start of an image pull task to its end, retries included.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 14)})
)

// Collectors are the puller's metrics.
func Collectors() []prometheus.Collector { return []prometheus.Collector{pullsTotal, pullSeconds} }

func (p *Puller) init() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tasks == nil {
		p.tasks = map[Key]*task{}
		p.sem = make(chan struct{}, max(p.Workers, 1))
		p.dirty = make(chan struct{}, 1)
	}
}

// Sync brings the tasks in line with ni's spec; ctx bounds the pulls it starts.
func (p *Puller) Sync(ctx context.Context, ni *v1beta1.NodeImage) {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[Key]bool{}
	for name, img := range ni.Spec.Images {
		for _, tag := range img.Tags {
			k := Key{name, tag.Tag}
			seen[k] = true
			if t := p.tasks[k]; t != nil {
				if t.st.Version == tag.Version {
					t.secrets = img.PullSecrets
					continue
				}
				t.cancel()
			}
			p.tasks[k] = p.start(ctx, k, tag, img, reported(ni, k, tag.Version))
		}
	}
	for k, t := range p.tasks {
		if !seen[k] {
			t.cancel()
			delete(p.tasks, k)
		}
	}
	p.markDirty()
}

// reported is what ni's status says of task k at version, if anything.
func reported(ni *v1beta1.NodeImage, k Key, version int64) *v1beta1.NodeImageTagStatus {
	for _, ts := range ni.Status.ImageStatuses[k.Name].Tags {
		if ts.Tag == k.Tag && ts.Version == version {
			return &ts
		}
	}
	return nil
}

// start creates task k; a task whose status already reports it finished is kept as it is.
func (p *Puller) start(ctx context.Context, k Key, tag v1beta1.NodeImageTagSpec, img v1beta1.NodeImageImageSpec,
	prev *v1beta1.NodeImageTagStatus) *task {
	t := &task{cancel: func() {}, secrets: img.PullSecrets, st: state{Version: tag.Version, Phase: v1beta1.NodeImagePullWaiting}}
	var started time.Time
	if prev != nil {
		if prev.StartTime != nil {
			started = prev.StartTime.Time
		}
		if prev.Phase == v1beta1.NodeImagePullSucceeded || prev.Phase == v1beta1.NodeImagePullFailed {
			t.st = state{Phase: prev.Phase, Progress: prev.Progress, Start: started, ImageID: prev.ImageID,
				Message: prev.Message, Version: prev.Version}
			if prev.CompletionTime != nil {
				t.st.Done = prev.CompletionTime.Time
			}
			return t
		}
	}
	tctx, cancel := context.WithCancel(ctx)
	t.cancel = cancel
	j := &job{Ref: k.Ref(), Always: tag.ImagePullPolicy == v1beta1.ImagePullJobPullAlways, Sandbox: img.SandboxConfig,
		Start: started, Initial: t.st, Acquire: p.acquire,
		Auths: func(ctx context.Context) ([]*runtimeapi.AuthConfig, error) { return p.auths(ctx, t, k) }}
	if tag.PullPolicy != nil {
		j.Policy = *tag.PullPolicy
	}
	j.Report = func(st state) { p.report(k, t, st) }
	log := p.Log.WithValues("image", k.Ref(), "version", tag.Version)
	go func() {
		defer func() {
			if r := recover(); r != nil { // the task fails; the daemon and the other pulls go on
				err := fmt.Errorf("panic: %v", r)
				log.Error(err, "pull task panicked", "stack", string(debug.Stack()))
				p.report(k, t, state{Phase: v1beta1.NodeImagePullFailed, Start: started, Done: time.Now(), Version: tag.Version,
					Message: "internal error: " + err.Error()})
			}
		}()
		j.run(tctx, p.Images)
		if tctx.Err() != nil {
			log.V(1).Info("pull task cancelled")
		}
	}()
	return t
}

func (p *Puller) acquire(ctx context.Context) (func(), error) {
	select {
	case p.sem <- struct{}{}:
		return func() { <-p.sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// report records st as task t's state, unless t was replaced meanwhile.
func (p *Puller) report(k Key, t *task, st state) {
	p.mu.Lock()
	current := p.tasks[k] == t
	if current {
		t.st = st
	}
	p.mu.Unlock()
	if !current {
		return
	}
	if st.finished() {
		result := "succeeded"
		if st.Phase == v1beta1.NodeImagePullFailed {
			result = "failed"
			p.Log.Info("image pull failed", "image", k.Ref(), "message", st.Message)
		} else {
			p.Log.Info("image pulled", "image", k.Ref(), "imageID", st.ImageID, "seconds", st.Done.Sub(st.Start).Seconds())
		}
		pullsTotal.WithLabelValues(result).Inc()
		pullSeconds.Observe(st.Done.Sub(st.Start).Seconds())
	}
	p.markDirty()
}

func (p *Puller) markDirty() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

// auths reads task t's pull secrets and returns their credentials for k's registry.
func (p *Puller) auths(ctx context.Context, t *task, k Key) ([]*runtimeapi.AuthConfig, error) {
	p.mu.Lock()
	refs := t.secrets
	p.mu.Unlock()
	registry := Registry(k.Name)
	var out []*runtimeapi.AuthConfig
	for _, ref := range refs {
		s := &corev1.Secret{}
		if err := p.Secrets.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
			return nil, fmt.Errorf("pull secret %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		creds, err := Credentials(s, registry)
		if err != nil {
			return nil, err
		}
		out = append(out, creds...)
	}
	return out, nil
}

// snapshot is the state of every task.
func (p *Puller) snapshot() map[Key]state {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Key]state, len(p.tasks))
	for k, t := range p.tasks {
		out[k] = t.st
	}
	return out
}

// dirtied signals when the tasks' state changed since the last signal.
func (p *Puller) dirtied() <-chan struct{} {
	p.init()
	return p.dirty
}

// Stop cancels every task and forgets them: a later Sync starts them again from the NodeImage.
func (p *Puller) Stop() {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, t := range p.tasks {
		t.cancel()
		delete(p.tasks, k)
	}
}
