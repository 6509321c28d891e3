package install

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/config"
	"github.com/kruise-ng/kruise/pkg/webhook/deletionprotection"
	"github.com/kruise-ng/kruise/pkg/webhook/podmutation"
)

// FieldOwner is the server-side-apply manager name of everything installed here.
const FieldOwner = "kruise-install"

// SidecarInjectionConfiguration is the MutatingWebhookConfiguration of the SidecarSet injection
// entries: installed empty, its webhooks are written by the manager alone (one per SidecarSet,
// pkg/webhook/sidecarinjection), and it goes away with Kruise.
const SidecarInjectionConfiguration = "kruise-sidecarset-injection"

// BudgetProtectionConfiguration is the ValidatingWebhookConfiguration of the PodUnavailableBudget
// entries: installed empty, its webhooks are written by the manager alone (pkg/webhook/budgetguard).
const BudgetProtectionConfiguration = "kruise-podunavailablebudget-protection"

// PersistentPodStateConfiguration is the MutatingWebhookConfiguration of the PersistentPodState
// entries: installed empty, its webhooks are written by the manager alone (one per
// PersistentPodState, pkg/webhook/topologypin).
const PersistentPodStateConfiguration = "kruise-persistentpodstate-injection"

// WorkloadSpreadConfiguration is the MutatingWebhookConfiguration of the WorkloadSpread entries:
// installed empty, its webhooks are written by the manager alone (pkg/webhook/spreadplacement).
const WorkloadSpreadConfiguration = "kruise-workloadspread"

// MetricsReaderClusterRole may read the /metrics of kruise-manager and kruise-daemon (get on the
// non-resource URL /metrics, pkg/platform/metricsauth): bind it to the scraper's ServiceAccount.
const MetricsReaderClusterRole = "kruise-metrics-reader"

// MetricsReaderRole is the ClusterRole MetricsReaderClusterRole.
func MetricsReaderRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: MetricsReaderClusterRole},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
}

// ConversionPath is where the manager serves CRD conversion.
const ConversionPath = "/convert"

// ConversionCRDs are the kinds whose v1alpha1 and v1beta1 schemas differ; they are installed with a
// conversion webhook (the generated CRDs carry none, like OpenKruise's), the others with None.
var ConversionCRDs = []string{"statefulsets.apps.kruise.io", "daemonsets.apps.kruise.io", "sidecarsets.apps.kruise.io"}

// Options say where and for whom Kruise is installed.
type Options struct {
	// Namespace is the manager's namespace (its Role, Secret and Service live there).
	Namespace string
	// WebhookService names the manager's webhook Service.
	WebhookService string
	// Subject is who the manager runs as: a ServiceAccount in a cluster, a User in the sandbox
	// (whose client certificate carries that user name).
	Subject rbacv1.Subject
	// DaemonSubject is who kruise-daemon runs as; its ClusterRole (kruise-daemon-role) is bound to
	// it when set.
	DaemonSubject *rbacv1.Subject
	// PodWebhookFailurePolicy is the pod webhook's failure policy (Fail when empty); the manager
	// keeps it in line with its --pod-webhook-failure-policy.
	PodWebhookFailurePolicy admissionregistrationv1.FailurePolicyType
	// PodWebhookExcludedNamespaces are excluded from the pod webhook besides the fixed ones
	// (PodWebhookExcludedNamespaces).
	PodWebhookExcludedNamespaces []string
}

// Objects decodes the embedded manifests, rewrites the Role's namespace and the webhook Service
// reference to opts, and adds the bindings of the manager's roles to opts.Subject (and of the
// daemon's to opts.DaemonSubject).
func Objects(opts Options) ([]*unstructured.Unstructured, error) {
	objs, err := manifests()
	if err != nil {
		return nil, err
	}
	for _, u := range objs {
		if err := rewrite(u, opts); err != nil {
			return nil, err
		}
	}
	var head []*unstructured.Unstructured
	for _, o := range extraObjects(opts) {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "status")
		head = append(head, u)
	}
	return append(head, objs...), nil
}

// manifests are the generated manifests embedded from config/, one object per YAML document.
func manifests() ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	err := fs.WalkDir(config.Manifests, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := config.Manifests.ReadFile(path)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			objs = append(objs, u)
		}
		return nil
	})
	return objs, err
}

// extraObjects are what the manifests lack for opts: the namespaces, the configurations the
// manager's registrars fill, the metrics reader role and the bindings of opts' subjects.
func extraObjects(opts Options) []runtime.Object {
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}
	daemonNS := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: appspub.KruiseDaemonConfigNamespace}}
	mutating := func(name string) *admissionregistrationv1.MutatingWebhookConfiguration {
		return &admissionregistrationv1.MutatingWebhookConfiguration{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	protection := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: BudgetProtectionConfiguration}}
	binding := func(kind, name, namespace, roleKind, role string, subject rbacv1.Subject) runtime.Object {
		meta := metav1.ObjectMeta{Name: name, Namespace: namespace}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: role}
		if kind == "ClusterRoleBinding" {
			return &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: kind},
				ObjectMeta: meta, RoleRef: ref, Subjects: []rbacv1.Subject{subject}}
		}
		return &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: kind},
			ObjectMeta: meta, RoleRef: ref, Subjects: []rbacv1.Subject{subject}}
	}
	extra := []runtime.Object{
		ns, daemonNS, mutating(SidecarInjectionConfiguration), protection, mutating(WorkloadSpreadConfiguration),
		mutating(PersistentPodStateConfiguration), MetricsReaderRole(),
		binding("RoleBinding", "kruise-manager-rolebinding", appspub.KruiseDaemonConfigNamespace, "Role", "kruise-manager-role", opts.Subject),
		binding("ClusterRoleBinding", "kruise-manager-rolebinding", "", "ClusterRole", "kruise-manager-role", opts.Subject),
		binding("RoleBinding", "kruise-manager-rolebinding", opts.Namespace, "Role", "kruise-manager-role", opts.Subject),
	}
	if opts.DaemonSubject != nil {
		extra = append(extra,
			binding("ClusterRoleBinding", "kruise-daemon-rolebinding", "", "ClusterRole", "kruise-daemon-role", *opts.DaemonSubject),
			binding("RoleBinding", "kruise-daemon-rolebinding", appspub.KruiseDaemonConfigNamespace, "Role", "kruise-daemon-role", *opts.DaemonSubject))
		policy, binding := daemonNodePolicy(*opts.DaemonSubject)
		extra = append(extra, policy, binding)
	}
	return extra
}

// rewrite points namespaced RBAC at opts.Namespace and webhooks at opts' Service, and patches the
// conversion webhook into the CRDs that need one.
func rewrite(u *unstructured.Unstructured, opts Options) error {
	switch u.GetKind() {
	case "CustomResourceDefinition":
		if !slices.Contains(ConversionCRDs, u.GetName()) {
			return nil
		}
		conv := map[string]any{
			"strategy": "Webhook",
			"webhook": map[string]any{
				"conversionReviewVersions": []any{"v1"},
				"clientConfig": map[string]any{"service": map[string]any{
					"namespace": opts.Namespace, "name": opts.WebhookService, "path": ConversionPath}},
			},
		}
		return unstructured.SetNestedMap(u.Object, conv, "spec", "conversion")
	case "Role":
		if u.GetNamespace() != appspub.KruiseDaemonConfigNamespace { // the daemons' pull-secret namespace stays as it is
			u.SetNamespace(opts.Namespace)
		}
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		hooks, _, err := unstructured.NestedSlice(u.Object, "webhooks")
		if err != nil {
			return err
		}
		for _, h := range hooks {
			hm := h.(map[string]any)
			if hm["name"] == podmutation.WebhookName || hm["name"] == podmutation.LaunchPriorityWebhookName {
				if err := scopePodWebhook(hm, opts); err != nil {
					return err
				}
			}
			// The deletion protection entries are called for labelled objects only.
			if err := deletionprotection.ScopeEntry(hm); err != nil {
				return err
			}
			if svc, ok, _ := unstructured.NestedMap(hm, "clientConfig", "service"); ok {
				svc["namespace"], svc["name"] = opts.Namespace, opts.WebhookService
				if err := unstructured.SetNestedMap(hm, svc, "clientConfig", "service"); err != nil {
					return err
				}
			}
		}
		return unstructured.SetNestedSlice(u.Object, hooks, "webhooks")
	}
	return nil
}

// scopePodWebhook gives the pod webhook its selectors and failure policy from the start, so that
// it is never installed matching every pod.
func scopePodWebhook(hm map[string]any, opts Options) error {
	fp := opts.PodWebhookFailurePolicy
	if fp == "" {
		fp = admissionregistrationv1.Fail
	}
	w := &admissionregistrationv1.MutatingWebhook{Name: hm["name"].(string)}
	podmutation.Scope(w, podmutation.ScopeOptions{FailurePolicy: fp, ExcludedNamespaces: PodWebhookExcludedNamespaces(opts.Namespace, opts.PodWebhookExcludedNamespaces...)})
	scoped, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		return err
	}
	for _, f := range []string{"objectSelector", "namespaceSelector", "failurePolicy", "matchConditions", "reinvocationPolicy"} {
		if v, ok := scoped[f]; ok {
			hm[f] = v
		} else {
			delete(hm, f)
		}
	}
	return nil
}

// PodWebhookExcludedNamespaces are the namespaces whose pods never call the pod webhook: the
// control plane's, the manager's own and extra ones.
func PodWebhookExcludedNamespaces(managerNamespace string, extra ...string) []string {
	return append([]string{metav1.NamespaceSystem, "kube-node-lease", managerNamespace}, extra...)
}

// Apply installs the objects with server-side apply and waits until every CRD is Established.
// Fields the manager maintains (CA bundles, webhook URLs) are left to it: re-applying does not
// undo them, since apply only owns the fields it sets.
func Apply(ctx context.Context, c client.Client, opts Options) error {
	objs, err := Objects(opts)
	if err != nil {
		return err
	}
	return apply(ctx, c, objs)
}

// ApplyCRDs installs Kruise's CRDs only (no RBAC, no admission webhooks: objects of Kruise's kinds
// are stored as given; the conversion webhooks point at opts' Service) and waits until they are
// Established. A test loading objects before Kruise starts begins there.
func ApplyCRDs(ctx context.Context, c client.Client, opts Options) error {
	objs, err := Objects(opts)
	if err != nil {
		return err
	}
	var crds []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, u)
		}
	}
	return apply(ctx, c, crds)
}

// apply applies objs and waits until every CRD among them is Established.
func apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	for _, u := range objs {
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			crd := &apiextv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: u.GetName()}, crd); err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextv1.Established && cond.Status == apiextv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", u.GetName(), err)
		}
	}
	return nil
}
