package integration

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/app/install"
	"github.com/kruise-ng/kruise/pkg/app/manager"
	"github.com/kruise-ng/kruise/test/harness"
)

// kruise-manager, running as its own user with only the generated RBAC, makes its webhook
// certificates, registers its webhooks by URL, becomes ready, defaults Kruise objects the way
// OpenKruise does, and rejects invalid CloneSets and Advanced StatefulSets naming the offending field.
func TestManagerServesDefaultingWebhooks(t *testing.T) {
	ctx := context.Background()
	admin := harness.KruiseClient(t, cfg)
	installKruise(t, admin)
	startManager(t, managerOptions(t, "kruise-manager-0"))

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "defaults-"}}
	if err := admin.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}}}
	cs := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name},
		Spec: appsv1alpha1.CloneSetSpec{Selector: selector, Template: template}}
	if err := admin.Create(ctx, cs); err != nil {
		t.Fatalf("create CloneSet through the webhook: %v", err)
	}
	us := cs.Spec.UpdateStrategy
	if cs.Spec.Replicas == nil || *cs.Spec.Replicas != 1 || cs.Spec.RevisionHistoryLimit == nil || *cs.Spec.RevisionHistoryLimit != 10 ||
		us.Type != appsv1alpha1.RecreateCloneSetUpdateStrategyType || us.MaxUnavailable == nil || *us.MaxUnavailable != intstr.FromString("20%") {
		t.Errorf("CloneSet not defaulted like OpenKruise: replicas %v, revisionHistoryLimit %v, updateStrategy %+v",
			cs.Spec.Replicas, cs.Spec.RevisionHistoryLimit, us)
	}
	checkTemplateDefaults(t, admin, cs, template)
	sts := &appsv1beta1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns.Name},
		Spec: appsv1beta1.StatefulSetSpec{Selector: selector, Template: template}}
	if err := admin.Create(ctx, sts); err != nil {
		t.Fatalf("create Advanced StatefulSet through the webhook: %v", err)
	}
	if sts.Spec.PodManagementPolicy != "OrderedReady" || sts.Spec.UpdateStrategy.RollingUpdate == nil ||
		sts.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable == nil || *sts.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable != intstr.FromInt32(1) {
		t.Errorf("Advanced StatefulSet not defaulted like OpenKruise: %+v", sts.Spec)
	}
	// A value the user set is kept.
	keep := &appsv1alpha1.CloneSet{ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: ns.Name},
		Spec: appsv1alpha1.CloneSetSpec{Selector: selector, Template: template,
			UpdateStrategy: appsv1alpha1.CloneSetUpdateStrategy{Type: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType}}}
	if err := admin.Create(ctx, keep); err != nil {
		t.Fatal(err)
	}
	if keep.Spec.UpdateStrategy.Type != appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType {
		t.Errorf("the webhook overwrote the user's update type: %s", keep.Spec.UpdateStrategy.Type)
	}

	t.Run("conversion round trip", func(t *testing.T) { checkConversion(t, admin, ns.Name, selector, template) })
	t.Run("CloneSet validation", func(t *testing.T) { checkCloneSetValidation(t, admin, ns.Name, selector, template) })
	t.Run("StatefulSet validation", func(t *testing.T) { checkStatefulSetValidation(t, admin, ns.Name, selector, template) })
	t.Run("pod webhook and KruisePodReady", func(t *testing.T) { checkPodWebhook(t, admin, ns.Name, cs) })
}

// installKruise applies Kruise's CRDs, RBAC (for the user kruise-manager) and webhook
// configurations, and removes the webhooks when the test ends: later tests share this API server and
// must not call a stopped webhook.
func installKruise(t *testing.T, admin client.Client) {
	t.Helper()
	ctx := context.Background()
	opts := install.Options{Namespace: "kruise-system", WebhookService: "kruise-webhook-service",
		Subject: rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "kruise-manager"}}
	if err := install.Apply(ctx, admin, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Delete(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: manager.MutatingWebhookConfiguration}})
		_ = admin.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: manager.ValidatingWebhookConfiguration}})
		for _, name := range install.ConversionCRDs {
			crd := &apiextv1.CustomResourceDefinition{}
			if err := admin.Get(ctx, client.ObjectKey{Name: name}, crd); err == nil {
				crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
				_ = admin.Update(ctx, crd)
			}
		}
	})
}

// managerOptions are a replica's options: its own ports and certificate folder, webhooks by URL on
// loopback, leader election in kruise-system.
func managerOptions(t *testing.T, replica string) manager.Options {
	return manager.Options{ConversionCRDs: install.ConversionCRDs, MetricsAddr: "0", ProbeAddr: fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)),
		LeaderElect: true, LeaderElectionNamespace: "kruise-system", LeaseDuration: 15 * time.Second, Namespace: "kruise-system",
		WebhookHost: "127.0.0.1", WebhookPort: harness.FreePort(t), CertDir: t.TempDir(), WebhookSecret: "kruise-webhook-certs",
		WebhookService: "kruise-webhook-service", WebhookURLHost: "127.0.0.1", QPS: 50, Burst: 100, Workers: 1,
		PodWebhookFailurePolicy: "Fail", ReplicaName: replica, SeveralInProcess: true}
}

// startManager runs kruise-manager as the user kruise-manager (only the generated RBAC) until the
// test ends, and waits until it is ready.
func startManager(t *testing.T, mo manager.Options) {
	t.Helper()
	managerCfg, err := api.ConfigFor("kruise-manager")
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.Run(runCtx, managerCfg, mo) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager stopped with an error: %v", err)
		}
	})
	harness.Eventually(t, 60*time.Second, "kruise-manager "+mo.ReplicaName+" ready", func() (bool, string) {
		select {
		case err := <-done:
			done <- err // for the cleanup
			t.Fatalf("manager exited: %v", err)
		default:
		}
		resp, err := http.Get("http://" + mo.ProbeAddr + "/readyz")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// checkConversion writes each kind whose versions differ as v1alpha1, reads it back as v1beta1
// (the stored version) and as v1alpha1 again: nothing may be lost either way.
func checkConversion(t *testing.T, c client.Client, ns string, selector *metav1.LabelSelector, template corev1.PodTemplateSpec) {
	ctx := context.Background()
	sts := &appsv1alpha1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "conv-sts", Namespace: ns},
		Spec: appsv1alpha1.StatefulSetSpec{Selector: selector, Template: template, ServiceName: "svc", Replicas: ptr.To[int32](3)}}
	ds := &appsv1alpha1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "conv-ds", Namespace: ns},
		Spec: appsv1alpha1.DaemonSetSpec{Selector: selector, Template: template, MinReadySeconds: 7}}
	sc := &appsv1alpha1.SidecarSet{ObjectMeta: metav1.ObjectMeta{Name: "conv-sidecar-" + ns},
		Spec: appsv1alpha1.SidecarSetSpec{Selector: selector, Namespace: "team-a",
			Containers: []appsv1alpha1.SidecarSetContainer{{Container: corev1.Container{Name: "conv-sidecar", Image: "registry.example/log:v1"}}}}}
	pairs := []struct {
		alpha, again client.Object
		beta         client.Object
		spec         func(client.Object) any
	}{
		{sts, &appsv1alpha1.StatefulSet{}, &appsv1beta1.StatefulSet{}, func(o client.Object) any { return o.(*appsv1alpha1.StatefulSet).Spec }},
		{ds, &appsv1alpha1.DaemonSet{}, &appsv1beta1.DaemonSet{}, func(o client.Object) any { return o.(*appsv1alpha1.DaemonSet).Spec }},
		{sc, &appsv1alpha1.SidecarSet{}, &appsv1beta1.SidecarSet{}, func(o client.Object) any { return o.(*appsv1alpha1.SidecarSet).Spec }},
	}
	for _, p := range pairs {
		if err := c.Create(ctx, p.alpha); err != nil {
			t.Fatalf("create v1alpha1 %T: %v", p.alpha, err)
		}
		key := client.ObjectKeyFromObject(p.alpha)
		if err := c.Get(ctx, key, p.beta); err != nil {
			t.Fatalf("read %T as v1beta1: %v", p.alpha, err)
		}
		if err := c.Get(ctx, key, p.again); err != nil {
			t.Fatalf("read %T as v1alpha1 again: %v", p.alpha, err)
		}
		if !equality.Semantic.DeepEqual(p.spec(p.alpha), p.spec(p.again)) {
			t.Errorf("%T lost data through v1beta1:\n wrote %+v\n read  %+v", p.alpha, p.spec(p.alpha), p.spec(p.again))
		}
	}
	if got := pairs[2].again.(*appsv1alpha1.SidecarSet).Spec.Namespace; got != "team-a" {
		t.Errorf("v1alpha1-only SidecarSet.spec.namespace = %q after a v1beta1 round trip; want team-a", got)
	}
}

// checkTemplateDefaults: the webhook defaults a CloneSet's pod template as OpenKruise's does (so
// revision names match OpenKruise's), and replacing the CloneSet with the template as first written
// changes nothing (no new generation, so no rollout).
func checkTemplateDefaults(t *testing.T, c client.Client, cs *appsv1alpha1.CloneSet, written corev1.PodTemplateSpec) {
	t.Helper()
	spec := cs.Spec.Template.Spec
	if ctr := spec.Containers[0]; ctr.ImagePullPolicy != corev1.PullAlways || ctr.TerminationMessagePath != "/dev/termination-log" ||
		spec.DNSPolicy != corev1.DNSClusterFirst || spec.SchedulerName != "default-scheduler" || spec.SecurityContext == nil {
		t.Errorf("pod template not defaulted like OpenKruise's: %+v", spec)
	}
	generation := cs.Generation
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &appsv1alpha1.CloneSet{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(cs), cur); err != nil {
			return err
		}
		cur.Spec.Template = *written.DeepCopy()
		return c.Update(context.Background(), cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	got := &appsv1alpha1.CloneSet{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cs), got); err != nil {
		t.Fatal(err)
	}
	if got.Generation != generation {
		t.Errorf("replacing the CloneSet with its template as written made generation %d (was %d): pods would roll", got.Generation, generation)
	}
}
