package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-ng/kruise/apis/apps/v1alpha1"
	"github.com/kruise-ng/kruise/pkg/core/distributionrules"
	"github.com/kruise-ng/kruise/test/harness"
)

// labelNamespace sets (value non-empty) or removes a label of a namespace.
func labelNamespace(t *testing.T, ns, key, value string) {
	t.Helper()
	v := "null"
	if value != "" {
		v = fmt.Sprintf("%q", value)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%s}}}`, key, v)
	if _, err := cs.CoreV1().Namespaces().Patch(context.Background(), ns, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// newDistribution distributes resource (JSON) to the namespaces labelled key=value and to included.
func newDistribution(t *testing.T, c client.Client, resource, key, value string, included ...string) *appsv1alpha1.ResourceDistribution {
	t.Helper()
	d := &appsv1alpha1.ResourceDistribution{ObjectMeta: metav1.ObjectMeta{Name: "rd-" + utilrand.String(6)},
		Spec: appsv1alpha1.ResourceDistributionSpec{Resource: runtime.RawExtension{Raw: []byte(resource)},
			Targets: appsv1alpha1.ResourceDistributionTargets{NamespaceLabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{key: value}}}}}
	for _, ns := range included {
		d.Spec.Targets.IncludedNamespaces.List = append(d.Spec.Targets.IncludedNamespaces.List, appsv1alpha1.ResourceDistributionNamespace{Name: ns})
	}
	if err := c.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), d) })
	return d
}

// configMapIn is the ConfigMap name of ns, nil when there is none.
func configMapIn(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func distributionStatus(t *testing.T, c client.Client, name string) appsv1alpha1.ResourceDistributionStatus {
	t.Helper()
	d := &appsv1alpha1.ResourceDistribution{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return d.Status
}

func failedIn(st appsv1alpha1.ResourceDistributionStatus, typ appsv1alpha1.ResourceDistributionConditionType) []string {
	for _, c := range st.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return c.FailedNamespaces
		}
	}
	return nil
}

// A ConfigMap distributed by namespace label and by name: copies follow the namespaces' labels
// and creation, an edited copy is put back, a namespace holding a ConfigMap of that name that the
// distribution does not own is reported and left alone (and refused at admission when it is known
// up front), a change of the resource reaches every copy, and deleting the distribution removes
// them.
func TestResourceDistributionFollowsNamespaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	key, value := "rd-e2e", utilrand.String(6)
	a, b, taken := namespace(t), namespace(t), namespace(t)
	labelNamespace(t, a, key, value)
	name := "shared-" + value
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: taken, Name: name}, Data: map[string]string{"owner": "someone else"}}
	if _, err := cs.CoreV1().ConfigMaps(taken).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	missing := "rd-later-" + value
	resource := func(v string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"level":%q}}`, name, v)
	}
	d := newDistribution(t, c, resource("1"), key, value, missing)

	harness.Eventually(t, 30*time.Second, "a copy in the labelled namespace, the missing one reported", func() (bool, string) {
		cm := configMapIn(t, a, name)
		st := distributionStatus(t, c, d.Name)
		return cm != nil && cm.Data["level"] == "1" && st.Desired == 2 && st.Succeeded == 1 &&
			slices.Equal(failedIn(st, appsv1alpha1.ResourceDistributionNamespaceNotExists), []string{missing}), fmt.Sprintf("%+v", st)
	})
	cm := configMapIn(t, a, name)
	stored := &appsv1alpha1.ResourceDistribution{} // the hash is of spec.resource as the API server stores it
	if err := c.Get(ctx, client.ObjectKey{Name: d.Name}, stored); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(cm); ref == nil || ref.Name != d.Name || cm.Annotations[distributionrules.FromAnnotation] != d.Name ||
		cm.Annotations[distributionrules.HashAnnotation] != distributionrules.Hash(stored.Spec.Resource.Raw) {
		t.Errorf("copy metadata: owner %+v, annotations %v", cm.OwnerReferences, cm.Annotations)
	}
	if configMapIn(t, b, name) != nil {
		t.Error("a copy in a namespace the distribution does not target")
	}

	// A namespace gains the label; the missing one is created.
	labelNamespace(t, b, key, value)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: missing}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), missing, metav1.DeleteOptions{}) })
	harness.Eventually(t, 30*time.Second, "copies in the newly labelled and the new namespace", func() (bool, string) {
		st := distributionStatus(t, c, d.Name)
		return configMapIn(t, b, name) != nil && configMapIn(t, missing, name) != nil && st.Desired == 3 && st.Succeeded == 3 && st.Failed == 0,
			fmt.Sprintf("%+v", st)
	})

	// An edited copy is put back.
	cm = configMapIn(t, a, name)
	cm.Data["level"] = "edited"
	if _, err := cs.CoreV1().ConfigMaps(a).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the edit reverted", func() (bool, string) {
		cm := configMapIn(t, a, name)
		return cm.Data["level"] == "1", fmt.Sprint(cm.Data)
	})

	// The namespace holding someone else's ConfigMap becomes a target: a conflict, left alone.
	labelNamespace(t, taken, key, value)
	harness.Eventually(t, 30*time.Second, "the conflict reported", func() (bool, string) {
		st := distributionStatus(t, c, d.Name)
		return slices.Equal(failedIn(st, appsv1alpha1.ResourceDistributionConflictOccurred), []string{taken}) && st.Failed == 1, fmt.Sprintf("%+v", st)
	})
	if cm := configMapIn(t, taken, name); cm.Data["owner"] != "someone else" || metav1.GetControllerOf(cm) != nil {
		t.Errorf("the foreign ConfigMap was touched: %+v", cm)
	}
	// Known up front, the same conflict is refused at admission, naming the namespace.
	other := &appsv1alpha1.ResourceDistribution{ObjectMeta: metav1.ObjectMeta{Name: "rd-refused-" + value},
		Spec: appsv1alpha1.ResourceDistributionSpec{Resource: runtime.RawExtension{Raw: []byte(resource("2"))},
			Targets: appsv1alpha1.ResourceDistributionTargets{IncludedNamespaces: appsv1alpha1.ResourceDistributionTargetNamespaces{
				List: []appsv1alpha1.ResourceDistributionNamespace{{Name: taken}}}}}}
	if err := c.Create(ctx, other); err == nil || !strings.Contains(err.Error(), taken) {
		_ = c.Delete(ctx, other)
		t.Errorf("a distribution onto a foreign ConfigMap: %v, want a refusal naming %s", err, taken)
	}

	// Namespaces lose the label: the copy goes, the foreign ConfigMap stays, the conflict clears.
	labelNamespace(t, b, key, "")
	labelNamespace(t, taken, key, "")
	harness.Eventually(t, 30*time.Second, "the copy removed from the namespace no longer targeted", func() (bool, string) {
		st := distributionStatus(t, c, d.Name)
		return configMapIn(t, b, name) == nil && failedIn(st, appsv1alpha1.ResourceDistributionConflictOccurred) == nil, fmt.Sprintf("%+v", st)
	})
	if configMapIn(t, taken, name) == nil {
		t.Error("the foreign ConfigMap was deleted")
	}

	// A new resource reaches every copy.
	cur := &appsv1alpha1.ResourceDistribution{}
	if err := c.Get(ctx, client.ObjectKey{Name: d.Name}, cur); err != nil {
		t.Fatal(err)
	}
	cur.Spec.Resource.Raw = []byte(resource("2"))
	if err := c.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "every copy at the new resource", func() (bool, string) {
		for _, ns := range []string{a, missing} {
			if cm := configMapIn(t, ns, name); cm == nil || cm.Data["level"] != "2" {
				return false, ns
			}
		}
		return true, ""
	})

	// Deleting the distribution deletes its copies (garbage collection), not the foreign one.
	if err := c.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	collectStart := time.Now()
	defer func() {
		t.Logf("copies collected %s after the distribution was deleted", time.Since(collectStart).Round(time.Second))
	}()
	harness.Eventually(t, 60*time.Second, "copies collected with the distribution", func() (bool, string) {
		return configMapIn(t, a, name) == nil && configMapIn(t, missing, name) == nil, ""
	})
	if configMapIn(t, taken, name) == nil {
		t.Error("the foreign ConfigMap was deleted")
	}
}

// A registry pull secret distributed to the namespaces of a team (the docs' example): its type
// and data arrive as given, a copy whose data is edited is put back, a namespace leaving the team
// loses its copy, and a malformed secret is refused at admission by the API server's own rules.
func TestResourceDistributionPullSecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := kruiseClient(t)
	key, value := "rd-team", utilrand.String(6)
	ns := namespace(t)
	labelNamespace(t, ns, key, value)
	config := base64.StdEncoding.EncodeToString([]byte(`{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`))
	secret := fmt.Sprintf(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"regcred"},"type":"kubernetes.io/dockerconfigjson","data":{".dockerconfigjson":%q}}`, config)
	d := newDistribution(t, c, secret, key, value)
	get := func() *corev1.Secret {
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, "regcred", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	harness.Eventually(t, 30*time.Second, "the pull secret copied", func() (bool, string) {
		s := get()
		return s != nil && s.Type == corev1.SecretTypeDockerConfigJson && base64.StdEncoding.EncodeToString(s.Data[".dockerconfigjson"]) == config, ""
	})
	s := get()
	s.Data[".dockerconfigjson"] = []byte(`{"auths":{}}`)
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the edited secret put back", func() (bool, string) {
		return base64.StdEncoding.EncodeToString(get().Data[".dockerconfigjson"]) == config, ""
	})
	labelNamespace(t, ns, key, "")
	harness.Eventually(t, 30*time.Second, "the secret removed from the namespace leaving the team", func() (bool, string) {
		return get() == nil, ""
	})
	harness.Eventually(t, 30*time.Second, "no target left", func() (bool, string) {
		st := distributionStatus(t, c, d.Name)
		return st.Desired == 0 && st.Failed == 0, fmt.Sprintf("%+v", st)
	})

	bad := &appsv1alpha1.ResourceDistribution{ObjectMeta: metav1.ObjectMeta{Name: "rd-bad-" + value},
		Spec: appsv1alpha1.ResourceDistributionSpec{Resource: runtime.RawExtension{Raw: []byte(
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"regcred"},"type":"kubernetes.io/dockerconfigjson","data":{}}`)}}}
	if err := c.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.resource") {
		_ = c.Delete(ctx, bad)
		t.Errorf("a dockerconfigjson secret without its key: %v, want a refusal at spec.resource", err)
	}
}
