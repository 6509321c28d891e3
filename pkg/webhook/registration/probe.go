package registration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-ng/kruise/pkg/webhook/mount"
)

// The probe: every dynamically registered configuration carries one more entry, ProbeEntryName,
// called only for the dry-run creation of a ConfigMap labelled ProbeLabel=<configuration> in the
// manager's namespace, at ProbePath/<configuration>/<serial>. The probe's handler (ServeProbe)
// refuses that creation with a message naming the serial, so a dry run tells which write of the configuration the API
// server answering it has loaded — and with it every entry of that write, since the API server
// loads a configuration object whole.
const (
	ProbeEntryName = "registration-probe.kruise.io"
	ProbeLabel     = "apps.kruise.io/registration-probe"
	ProbePath      = "/registration-probe/"
	probeMessage   = "kruise registration probe: "
)

// +kubebuilder:rbac:groups="",namespace=kruise-system,resources=configmaps,verbs=create

// ProbeEntry is where a configuration's probe entry calls and what it matches.
type ProbeEntry struct {
	// ClientConfig reaches the manager's webhook server (its path is replaced).
	ClientConfig admissionregistrationv1.WebhookClientConfig
	// Namespace is the manager's, where the probe ConfigMap is dry-run.
	Namespace string
	// Configuration and Serial are set by the write (table.write).
	Configuration string
	Serial        int64
}

func (p ProbeEntry) parts() (admissionregistrationv1.WebhookClientConfig, []admissionregistrationv1.RuleWithOperations, *metav1.LabelSelector, *metav1.LabelSelector) {
	cc := WithPath(p.ClientConfig, fmt.Sprintf("%s%s/%d", ProbePath, p.Configuration, p.Serial))
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
			Resources: []string{"configmaps"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
	}}
	ns := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{p.Namespace}}}}
	obj := &metav1.LabelSelector{MatchLabels: map[string]string{ProbeLabel: p.Configuration}}
	return cc, rules, ns, obj
}

// Mutating is the probe entry of a MutatingWebhookConfiguration.
func (p ProbeEntry) Mutating() admissionregistrationv1.MutatingWebhook {
	cc, rules, ns, obj := p.parts()
	return admissionregistrationv1.MutatingWebhook{Name: ProbeEntryName, ClientConfig: cc, Rules: rules,
		FailurePolicy: ptr.To(admissionregistrationv1.Ignore), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector: ns, ObjectSelector: obj, SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds: ptr.To[int32](5), AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy)}
}

// Validating is the probe entry of a ValidatingWebhookConfiguration.
func (p ProbeEntry) Validating() admissionregistrationv1.ValidatingWebhook {
	cc, rules, ns, obj := p.parts()
	return admissionregistrationv1.ValidatingWebhook{Name: ProbeEntryName, ClientConfig: cc, Rules: rules,
		FailurePolicy: ptr.To(admissionregistrationv1.Ignore), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
		NamespaceSelector: ns, ObjectSelector: obj, SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone),
		TimeoutSeconds: ptr.To[int32](5), AdmissionReviewVersions: []string{"v1"}}
}

// ServeProbe serves the probe entries' calls on srv (every replica: any may be called).
func ServeProbe(srv webhook.Server) {
	mount.Admission(srv, ProbePath, admission.HandlerFunc(func(ctx context.Context, _ admission.Request) admission.Response {
		return admission.Denied(probeMessage + mount.Suffix(ctx))
	}))
}

// probeAnswer finds, in the error of a probe's dry run, the serial of configuration the API
// server called.
func probeAnswer(err error, configuration string) (int64, bool) {
	if err == nil {
		return 0, false
	}
	m := regexp.MustCompile(regexp.QuoteMeta(probeMessage+configuration+"/") + `(\d+)`).FindStringSubmatch(err.Error())
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil
}

// ErrNotConfirmed is returned by Confirm when ctx ends before the API server shows the write.
var ErrNotConfirmed = errors.New("the API server has not loaded the webhook entries")

// Confirm returns once a dry run shows that the API server calls the entries of write serial of
// configuration (or a later one), or ErrNotConfirmed, with what the last probe saw, when ctx ends
// first. c dry-runs a ConfigMap in namespace.
func Confirm(ctx context.Context, c client.Client, namespace, configuration string, serial int64) error {
	wait := 2 * time.Millisecond
	var last string
	for {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "kruise-registration-probe-", Namespace: namespace,
			Labels: map[string]string{ProbeLabel: configuration}}}
		err := c.Create(ctx, cm, client.DryRunAll)
		probes.WithLabelValues(configuration).Inc()
		got, ok := probeAnswer(err, configuration)
		switch {
		case ok && got >= serial:
			return nil
		case ok:
			last = fmt.Sprintf("it calls the entries of write %d, not yet %d", got, serial)
		case err == nil || strings.Contains(err.Error(), "already exists"):
			last = "it does not call the probe entry yet"
		default:
			last = "the probe failed: " + err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w of %s (write %d): %s", ErrNotConfirmed, configuration, serial, last)
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}
