package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"

	"github.com/kruise-ng/kruise/pkg/node/containermeta"
	"github.com/kruise-ng/kruise/pkg/node/criruntime"
	"github.com/kruise-ng/kruise/pkg/node/imagepuller"
	"github.com/kruise-ng/kruise/pkg/node/prober"
	"github.com/kruise-ng/kruise/pkg/node/restarter"
	"github.com/kruise-ng/kruise/pkg/platform/metricsauth"
)

// The daemon's permissions, generated into config/rbac/daemon by `make generate`.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Options are kruise-daemon's flags.
type Options struct {
	// NodeName is the node the daemon runs on ($NODE_NAME).
	NodeName string
	// RuntimeEndpoint is the CRI endpoint; empty: auto-detect (criruntime.Candidates).
	RuntimeEndpoint string
	// HealthAddr serves /healthz and /metrics.
	HealthAddr string
	// PprofAddr serves Go's /debug/pprof (profiling); "0" or empty: not served.
	PprofAddr string
	// InsecureMetrics serves HealthAddr over plain HTTP and /metrics to anyone, as OpenKruise
	// does (--metrics-secure=false); by default it is HTTPS and /metrics answers only
	// authenticated, authorized callers (pkg/platform/metricsauth).
	InsecureMetrics bool
	// RuntimeTimeout bounds connecting to the runtime and each health check.
	RuntimeTimeout time.Duration
	// PullWorkers caps the image pulls running at once.
	PullWorkers int
	// CRRWorkers caps the ContainerRecreateRequests processed at once (requests of different
	// pods proceed side by side, so one hanging preStop hook holds up only its own).
	CRRWorkers int
	// MaxPreStop caps each preStop hook of a recreated container, within its grace period;
	// 0: only the grace period bounds it.
	MaxPreStop time.Duration
	// ProbeWorkers caps the PodProbeMarker probes running at once.
	ProbeWorkers int
}

// BindFlags registers the options on fs; nodeName is the default node name ($NODE_NAME).
func (o *Options) BindFlags(fs *flag.FlagSet, nodeName string) {
	fs.StringVar(&o.NodeName, "node-name", nodeName, "the node this daemon runs on (default $NODE_NAME)")
	fs.StringVar(&o.RuntimeEndpoint, "runtime-endpoint", "", "CRI endpoint, e.g. unix:///run/containerd/containerd.sock (default: auto-detect containerd, then CRI-O)")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", ":10221", "address serving /healthz and /metrics")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "0", "address of Go's /debug/pprof endpoints (profiling; keep it on localhost: the daemon is on the node's network); \"0\" disables them")
	metricsauth.BindSecureFlag(fs, &o.InsecureMetrics,
		"serve /healthz and /metrics over HTTPS (self-signed), /metrics only to a bearer token the API server authenticates whose user may get the non-resource URL /metrics (ClusterRole kruise-metrics-reader); false: plain HTTP, /metrics to anyone (OpenKruise's behaviour)")
	fs.DurationVar(&o.RuntimeTimeout, "runtime-timeout", 10*time.Second, "timeout connecting to the container runtime")
	fs.IntVar(&o.PullWorkers, "max-workers-for-pull-image", 2, "image pulls (NodeImage tasks) running at once")
	fs.IntVar(&o.CRRWorkers, "max-workers-for-crr", 4, "ContainerRecreateRequests processed at once (each may wait on a preStop hook)")
	fs.IntVar(&o.ProbeWorkers, "max-workers-for-pod-probe", prober.DefaultWorkers, "PodProbeMarker probes (NodePodProbe) running at once")
	fs.DurationVar(&o.MaxPreStop, "max-prestop-duration", 5*time.Minute,
		"cap on each preStop hook run before recreating a container, within its grace period (0: the grace period only)")
}

// Validate reports bad options before anything connects.
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name (or $NODE_NAME) is required: the daemon acts only on its own node"))
	}
	if o.PullWorkers < 1 {
		errs = append(errs, errors.New("--max-workers-for-pull-image must be at least 1"))
	}
	if o.CRRWorkers < 1 {
		errs = append(errs, errors.New("--max-workers-for-crr must be at least 1"))
	}
	if o.ProbeWorkers < 1 {
		errs = append(errs, errors.New("--max-workers-for-pod-probe must be at least 1"))
	}
	if o.MaxPreStop < 0 {
		errs = append(errs, fmt.Errorf("--max-prestop-duration must not be negative (got %s; 0 leaves only the grace period)", o.MaxPreStop))
	}
	if o.RuntimeTimeout <= 0 {
		errs = append(errs, errors.New("--runtime-timeout must be positive"))
	}
	if _, _, err := net.SplitHostPort(o.HealthAddr); err != nil {
		errs = append(errs, fmt.Errorf("--health-probe-bind-address: %w", err))
	}
	return errors.Join(errs...)
}

var runtimeInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kruise_daemon_runtime_info",
	Help: "The container runtime kruise-daemon talks to (value 1)."}, []string{"node", "runtime", "version", "endpoint"})

// Run connects to the runtime and the API server, checks its node exists, starts its workers under
// a Supervisor, and serves health (the runtime's and the workers') and metrics until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	if err := o.Validate(); err != nil {
		return err
	}
	rt, err := criruntime.Connect(ctx, o.RuntimeEndpoint, o.RuntimeTimeout)
	if err != nil {
		return err
	}
	log.Info("connected to the container runtime", "runtime", rt.String())
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Nodes().Get(ctx, o.NodeName, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("node %q is not registered: run kruise-daemon on a node, with NODE_NAME set to its name", o.NodeName)
		}
		return fmt.Errorf("read node %s: %w", o.NodeName, err)
	}
	sup := NewSupervisor(log.WithName("supervisor"))
	meta := &containermeta.Reporter{Client: cs, Runtime: rt.Runtime, RuntimeName: rt.Name, Node: o.NodeName,
		Log: log.WithName("containermeta")}
	sup.Go(ctx, "containermeta", meta.Run)
	if err := startWorkers(ctx, sup, cfg, rt, o, log); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(runtimeInfo, workerRestarts)
	reg.MustRegister(imagepuller.Collectors()...)
	reg.MustRegister(prober.Collectors()...)
	runtimeInfo.WithLabelValues(o.NodeName, rt.Name, rt.Version, rt.Endpoint).Set(1)
	health := func(r *http.Request) error {
		if err := rt.Healthy(r.Context(), 2*time.Second); err != nil {
			return fmt.Errorf("container runtime: %w", err)
		}
		return sup.Healthy()
	}
	h, err := Endpoints(cfg, !o.InsecureMetrics, reg, health, log)
	if err != nil {
		return err
	}
	if o.PprofAddr != "" && o.PprofAddr != "0" {
		go servePprof(ctx, o.PprofAddr, log.WithName("pprof"))
	}
	return serve(ctx, o, h, log)
}

// Endpoints is the daemon's HTTP handler: /healthz (anyone: 200 "ok" or 503 "unhealthy", the
// reason only in the daemon's log) and /metrics from reg, behind pkg/platform/metricsauth's Guard when
// secure (the API server behind cfg authenticates and authorizes each scrape).
func Endpoints(cfg *rest.Config, secure bool, reg *prometheus.Registry, health func(*http.Request) error, log logr.Logger) (http.Handler, error) {
	var metrics http.Handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if secure {
		guarded, err := metricsauth.Guard(cfg, log.WithName("metrics"), metrics)
		if err != nil {
			return nil, err
		}
		metrics = guarded
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", healthz(log.WithName("healthz"), health))
	mux.Handle("/metrics", metrics)
	return mux, nil
}

// serve serves h at o.HealthAddr until ctx ends: over TLS with a self-signed certificate for the
// node unless o.InsecureMetrics.
func serve(ctx context.Context, o Options, h http.Handler, log logr.Logger) error {
	ln, err := net.Listen("tcp", o.HealthAddr)
	if err != nil {
		return fmt.Errorf("serve /healthz: %w", err)
	}
	scheme := "http"
	if !o.InsecureMetrics {
		tlsConfig, err := metricsauth.SelfSignedTLS(o.NodeName)
		if err != nil {
			_ = ln.Close()
			return err
		}
		ln, scheme = tls.NewListener(ln, tlsConfig), "https"
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("serving", "node", o.NodeName, "healthz", scheme+"://"+ln.Addr().String()+"/healthz", "metricsSecure", !o.InsecureMetrics)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// PprofHandler serves Go's /debug/pprof endpoints.
func PprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// servePprof serves PprofHandler on addr until ctx ends. Profiling is a debugging aid: its
// failure is logged and the daemon goes on.
func servePprof(ctx context.Context, addr string, log logr.Logger) {
	srv := &http.Server{Addr: addr, Handler: PprofHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Info("serving /debug/pprof", "address", addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error(err, "/debug/pprof is not served")
	}
}

// startWorkers starts, under sup, the image puller and the container recreator on one cache that
// holds only the node's NodeImage and its node's active ContainerRecreateRequests. The cache cannot
// be started twice: if it stops, /healthz fails and the kubelet restarts the daemon.
func startWorkers(ctx context.Context, sup *Supervisor, cfg *rest.Config, rt *criruntime.Runtime, o Options, log logr.Logger) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, appsv1alpha1.AddToScheme, appsv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	objects, err := cache.New(cfg, cache.Options{Scheme: scheme, ByObject: map[client.Object]cache.ByObject{
		&appsv1beta1.NodeImage{}:                 {Field: fields.OneTermEqualSelector("metadata.name", o.NodeName)},
		&appsv1alpha1.NodePodProbe{}:             {Field: fields.OneTermEqualSelector("metadata.name", o.NodeName)},
		&appsv1alpha1.ContainerRecreateRequest{}: {Label: labels.SelectorFromSet(restarter.Selector(o.NodeName))},
	}})
	if err != nil {
		return err
	}
	sup.GoOnce(ctx, "cache", objects.Start)
	p := &imagepuller.Puller{Images: rt.Images, Secrets: c, Node: o.NodeName, Workers: o.PullWorkers, Log: log.WithName("imagepuller")}
	sup.Go(ctx, "imagepuller", func(ctx context.Context) error { return p.Run(ctx, objects, c) })
	rc := &restarter.Recreator{Client: c, Runtime: rt.Runtime, Node: o.NodeName, Workers: o.CRRWorkers, MaxPreStop: o.MaxPreStop,
		Log: log.WithName("crr")}
	sup.Go(ctx, "crr", func(ctx context.Context) error { return rc.Run(ctx, objects) })
	probes := &prober.Runner{Client: c, Runtime: rt.Runtime, Node: o.NodeName, Workers: o.ProbeWorkers, Log: log.WithName("podprobe")}
	sup.Go(ctx, "podprobe", func(ctx context.Context) error { return probes.Run(ctx, objects) })
	return nil
}
