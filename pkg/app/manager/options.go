package manager

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/platform/metricsauth"
	"github.com/kruise-ng/kruise/pkg/webhook/registration"
)

// Names shared with the install manifests.
const (
	// LeaderElectionID is the name of the Lease the replicas elect a leader with.
	LeaderElectionID = "kruise-manager"
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration are the webhook configurations
	// whose CA bundle the manager maintains.
	MutatingWebhookConfiguration   = "kruise-mutating-webhook-configuration"
	ValidatingWebhookConfiguration = "kruise-validating-webhook-configuration"
)

// Options are kruise-manager's settings, one flag each.
type Options struct {
	MetricsAddr string
	// InsecureMetrics serves /metrics over plain HTTP to anyone, as OpenKruise does
	// (--metrics-secure=false); by default it is HTTPS, answered only to authenticated and
	// authorized callers (pkg/platform/metricsauth).
	InsecureMetrics bool
	// MetricsCertDir holds tls.crt and tls.key for /metrics (watched for renewal); without them
	// the certificate is self-signed.
	MetricsCertDir          string
	PprofAddr               string
	ProbeAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaseDuration           time.Duration

	// AdmissionAccessChecks makes admission check, with a SubjectAccessReview, that a Kruise
	// object's author holds the rights the object makes Kruise use (pkg/webhook/access).
	AdmissionAccessChecks bool
	// MaxEntryObjectsPerNamespace caps the PodUnavailableBudgets, WorkloadSpreads and
	// PersistentPodStates of one namespace (each kind on its own; 0: no cap): their webhook
	// entries share configurations that etcd bounds in size (registration.Gate.PerNamespace).
	MaxEntryObjectsPerNamespace int

	// Namespace is where the manager keeps its webhook Secret (and, in a cluster, runs).
	Namespace string
	// WebhookHost and WebhookPort are where the webhook server listens.
	WebhookHost string
	WebhookPort int
	// CertDir is where the serving certificate is written for the webhook server.
	CertDir string
	// WebhookSecret names the Secret holding the webhook CA and serving certificate.
	WebhookSecret string
	// WebhookService names the Service the API server reaches the webhooks through.
	WebhookService string
	// WebhookURLHost, when set, registers the webhooks by URL https://HOST:PORT/path instead of by
	// Service: for API servers that cannot reach Services (the sandbox).
	WebhookURLHost string
	// WebhookURLPort is the PORT of that URL (0: WebhookPort): a front that spreads calls over
	// several replicas listens there.
	WebhookURLPort int
	// WebhookAdvertiseAddress is host:port the other replicas reach this replica's webhook server
	// at (pkg/webhook/decider); empty: $POD_IP, else the URL host, with WebhookPort.
	WebhookAdvertiseAddress string
	// WebhookClientCAFile names the PEM bundle of the CA(s) of the client certificate the API
	// server presents to webhooks (pkg/webhook/callers); when set, every call but a CRD conversion
	// must present a certificate of that CA or of the webhook CA (another replica). Empty: callers
	// without a certificate are served, as OpenKruise serves them.
	WebhookClientCAFile string
	// WebhookClientAllowedNames, when not empty, are the common names accepted of the certificates
	// of WebhookClientCAFile's CA (for a CA that signs other clients' certificates too).
	WebhookClientAllowedNames []string
	// ReplicaName names this replica where replicas coordinate (the webhook Secret's report of the
	// CA each serves): its pod name.
	ReplicaName string
	// ConversionCRDs are the CRDs served in two versions with different schemas, converted by the
	// manager's conversion webhook.
	ConversionCRDs []string

	// QPS and Burst bound the manager's API client. The defaults (1000, 2000) leave the pace to the
	// API server's Priority and Fairness: at 100/200 the client's own limiter was what bounded a
	// 500-pod scale-up (15.0 s → 12.1–13.3 s) and a maxUnavailable 20% rollout (17.9 s → 13.7–15.7 s)
	// on the bench machine (make bench). The manager only writes what its plans call for.
	QPS   float64
	Burst int
	// Workers is how many objects each controller reconciles in parallel.
	Workers int
	// SyncPeriod is how often the cache hands every object to the controllers again (0: never);
	// nil: controller-runtime's default.
	SyncPeriod *time.Duration
	// FeatureGates is a comma-separated list of Name=bool.
	FeatureGates string
	// PodWebhookFailurePolicy is the pod webhook's failure policy: Fail or Ignore.
	PodWebhookFailurePolicy string
	// PodWebhookExcludedNamespaces are namespaces whose pods never call the pod webhook, besides
	// the control plane's and the manager's own.
	PodWebhookExcludedNamespaces []string
	// DaemonSetKeepUnselected keeps an Advanced DaemonSet's updated pod on a node taken out of
	// rollingUpdate.selector, as OpenKruise does; by default Kruise moves it back to the revision
	// the other unselected nodes run (kruise#1871).
	DaemonSetKeepUnselected bool
	// CloneSetScalingExcludePreparingDelete: pods held in PreparingDelete do not count when a
	// CloneSet scales out (OpenKruise's flag of that name; per CloneSet its label
	// apps.kruise.io/cloneset-scaling-exclude-preparing-delete).
	CloneSetScalingExcludePreparingDelete bool

	// SeveralInProcess lets more than one manager run in one process (tests of several replicas):
	// controller-runtime refuses two controllers of one name per process otherwise. No flag.
	SeveralInProcess bool
}

// BindFlags registers every option on fs with its default.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "kruise-system"
	}
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; \"0\" disables it")
	metricsauth.BindSecureFlag(fs, &o.InsecureMetrics,
		"serve /metrics over HTTPS, only to a bearer token the API server authenticates whose user may get the non-resource URL /metrics (ClusterRole "+install.MetricsReaderClusterRole+"); false: plain HTTP to anyone (OpenKruise's behaviour)")
	fs.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "folder of tls.crt and tls.key serving /metrics with --metrics-secure (default: a self-signed certificate)")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "0", "address of Go's /debug/pprof endpoints (profiling); \"0\" disables them")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8000", "address of the /healthz and /readyz endpoints")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader among replicas (Lease "+LeaderElectionID+"); only the leader runs controllers")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", ns, "namespace of the leader-election Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "how long a leader's Lease lasts without renewal")
	fs.StringVar(&o.Namespace, "namespace", ns, "namespace of the manager's webhook Secret and Service (default $POD_NAMESPACE or kruise-system)")
	fs.StringVar(&o.WebhookHost, "webhook-host", "", "address the webhook server listens on (empty: all)")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9876, "port of the webhook server")
	fs.StringVar(&o.CertDir, "webhook-cert-dir", "/tmp/kruise-webhook-certs", "folder the webhook serving certificate is written to")
	fs.StringVar(&o.WebhookSecret, "webhook-secret-name", "kruise-webhook-certs", "Secret holding the webhook CA and serving certificate")
	fs.StringVar(&o.WebhookService, "webhook-service-name", "kruise-webhook-service", "Service the API server reaches the webhooks through")
	fs.StringVar(&o.WebhookURLHost, "webhook-url-host", "", "register webhooks by URL https://HOST:PORT/... instead of by Service (for API servers that cannot reach Services)")
	fs.IntVar(&o.WebhookURLPort, "webhook-url-port", 0, "port of the --webhook-url-host URL (default --webhook-port): where a front balancing several replicas listens")
	fs.StringVar(&o.WebhookAdvertiseAddress, "webhook-advertise-address", "",
		"host:port the other replicas reach this replica's webhook server at, for the admissions the leader decides (default $POD_IP, else --webhook-url-host, with --webhook-port)")
	fs.StringVar(&o.WebhookClientCAFile, "webhook-client-ca-file", "",
		"PEM bundle of the CA(s) of the client certificate the API server presents to webhooks (set in its --admission-control-config-file; docs/webhook-authentication.md): "+
			"when set, a call to the webhook server without a certificate of that CA or of the webhook CA (another replica) is refused with 403, CRD conversion excepted. Empty: callers without a certificate are served")
	fs.Func("webhook-client-allowed-names", "comma-separated common names accepted of the certificates of --webhook-client-ca-file's CA (default: any); for a CA that signs other clients' certificates too", commaList(&o.WebhookClientAllowedNames))
	replica := os.Getenv("POD_NAME")
	if replica == "" {
		replica, _ = os.Hostname()
	}
	fs.StringVar(&o.ReplicaName, "replica-name", replica, "this replica's name among the manager's replicas (default $POD_NAME, else the host name)")
	fs.Float64Var(&o.QPS, "kube-client-qps", 1000, "queries per second of the manager's API client")
	fs.IntVar(&o.Burst, "kube-client-burst", 2000, "burst of the manager's API client")
	fs.IntVar(&o.Workers, "workers", 5, "objects each controller reconciles in parallel")
	fs.Func("sync-period", "how often every cached object is reconciled again, e.g. 1h; 0: never (default: controller-runtime's, 10h)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("not a duration of 0 or more: %q", v)
		}
		o.SyncPeriod = &d
		return nil
	})
	fs.StringVar(&o.PodWebhookFailurePolicy, "pod-webhook-failure-policy", "Fail",
		"what the API server does with a Kruise workload's pod when the pod webhook cannot be reached: Fail (refuse it; the workload retries) or Ignore (admit it without the KruisePodReady gate). Other pods never call the webhook")
	fs.Func("pod-webhook-excluded-namespaces", "comma-separated namespaces whose pods never call the pod webhook, besides kube-system, kube-node-lease and the manager's", commaList(&o.PodWebhookExcludedNamespaces))
	fs.StringVar(&o.FeatureGates, "feature-gates", "", "comma-separated Name=true|false feature gates (OpenKruise v1.9.0's names and defaults, "+
		"except, on purpose: "+KruiseDefaultsHelp()+"; docs/openkruise.md lists them)")
	fs.BoolVar(&o.AdmissionAccessChecks, "admission-access-checks", true,
		"refuse a Kruise object whose author may not themselves do what it makes Kruise do to existing pods and claims (SubjectAccessReview at admission: pods/exec for a PodProbeMarker's exec probe, pods/ephemeralcontainers for an EphemeralJob, update of a WorkloadSpread's target, delete pods for a ContainerRecreateRequest, …; docs/security.md); false: OpenKruise's behaviour")
	fs.IntVar(&o.MaxEntryObjectsPerNamespace, "max-entry-objects-per-namespace", registration.DefaultPerNamespace,
		"the most PodUnavailableBudgets, WorkloadSpreads and PersistentPodStates (each kind on its own) one namespace may hold: each adds webhook entries to a configuration all namespaces share, which etcd bounds in size; 0: no cap")
	fs.BoolVar(&o.DaemonSetKeepUnselected, "daemonset-keep-unselected", false,
		"keep an Advanced DaemonSet's updated pod on a node taken out of rollingUpdate.selector (OpenKruise's behaviour) instead of moving it back to the revision of the other unselected nodes")
	fs.BoolVar(&o.CloneSetScalingExcludePreparingDelete, "cloneset-scaling-exclude-preparing-delete", false,
		"a CloneSet does not count its pods in PreparingDelete when it scales out, so their replacements are created at once (OpenKruise's flag; per CloneSet the label apps.kruise.io/cloneset-scaling-exclude-preparing-delete: \"true\")")
	o.ConversionCRDs = install.ConversionCRDs
}

// Validate reports every invalid option at once.
func (o *Options) Validate() error {
	var errs []error
	if o.WebhookPort <= 0 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port %d is not a port", o.WebhookPort))
	}
	if o.WebhookURLHost != "" && net.ParseIP(o.WebhookURLHost) == nil && strings.ContainsAny(o.WebhookURLHost, ":/") {
		errs = append(errs, fmt.Errorf("--webhook-url-host %q must be a host name or IP, without port or scheme", o.WebhookURLHost))
	}
	if o.MaxEntryObjectsPerNamespace < 0 {
		errs = append(errs, fmt.Errorf("--max-entry-objects-per-namespace %d must be at least 0 (0: no cap)", o.MaxEntryObjectsPerNamespace))
	}
	if o.WebhookURLPort < 0 || o.WebhookURLPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-url-port %d is not a port", o.WebhookURLPort))
	}
	if len(o.WebhookClientAllowedNames) > 0 && o.WebhookClientCAFile == "" {
		errs = append(errs, errors.New("--webhook-client-allowed-names needs --webhook-client-ca-file (the CA whose certificates the names select)"))
	}
	if o.QPS <= 0 || o.Burst <= 0 {
		errs = append(errs, fmt.Errorf("--kube-client-qps and --kube-client-burst must be positive"))
	}
	if o.Workers <= 0 {
		errs = append(errs, fmt.Errorf("--workers must be positive, got %d", o.Workers))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace must be set"))
	}
	if o.PodWebhookFailurePolicy != "Fail" && o.PodWebhookFailurePolicy != "Ignore" {
		errs = append(errs, fmt.Errorf("--pod-webhook-failure-policy must be Fail or Ignore, got %q", o.PodWebhookFailurePolicy))
	}
	for _, ns := range o.PodWebhookExcludedNamespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--pod-webhook-excluded-namespaces: %q is not a namespace name: %s", ns, strings.Join(msgs, "; ")))
		}
	}
	if _, err := ParseFeatureGates(o.FeatureGates); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// webhookNames returns the DNS names and IPs the serving certificate must cover.
func (o *Options) webhookNames() ([]string, []net.IP) {
	svc := o.WebhookService + "." + o.Namespace
	dns := []string{o.WebhookService, svc, svc + ".svc", svc + ".svc.cluster.local"}
	var ips []net.IP
	if o.WebhookURLHost != "" {
		if ip := net.ParseIP(o.WebhookURLHost); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, o.WebhookURLHost)
		}
	}
	return dns, ips
}

// advertiseAddress is where the other replicas reach this replica's webhook server; "" when unknown.
func (o *Options) advertiseAddress() string {
	if o.WebhookAdvertiseAddress != "" {
		return o.WebhookAdvertiseAddress
	}
	host := os.Getenv("POD_IP")
	if host == "" {
		host = o.WebhookURLHost
	}
	if host == "" {
		return ""
	}
	return net.JoinHostPort(host, fmt.Sprint(o.WebhookPort))
}

// webhookURL is the base URL webhooks are registered with in URL mode, or "".
func (o *Options) webhookURL() string {
	if o.WebhookURLHost == "" {
		return ""
	}
	port := o.WebhookPort
	if o.WebhookURLPort != 0 {
		port = o.WebhookURLPort
	}
	return "https://" + net.JoinHostPort(o.WebhookURLHost, fmt.Sprint(port))
}

// commaList parses a flag's comma-separated list into dst, blanks dropped.
func commaList(dst *[]string) func(string) error {
	return func(v string) error {
		*dst = nil
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				*dst = append(*dst, item)
			}
		}
		return nil
	}
}

// podWebhookExcluded are the namespaces whose pods never call the pod webhooks: the fixed ones,
// the manager's and --pod-webhook-excluded-namespaces.
func (o Options) podWebhookExcluded() []string {
	return install.PodWebhookExcludedNamespaces(o.Namespace, o.PodWebhookExcludedNamespaces...)
}
