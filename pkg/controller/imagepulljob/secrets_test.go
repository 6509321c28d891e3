package imagepulljob

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

func pullSecret(typ corev1.SecretType, data string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "reg"}, Type: typ,
		Data: map[string][]byte{".dockerconfigjson": []byte(data)}}
}

// ownedCopy is Kruise's copy of ns/reg.
func ownedCopy(typ corev1.SecretType, data string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: appspub.KruiseDaemonConfigNamespace, Name: CopyName("ns", "reg"),
		Labels: map[string]string{SourceNamespaceLabel: "ns"}, Annotations: map[string]string{SourceNameAnnotation: "reg"}},
		Type: typ, Data: map[string][]byte{".dockerconfigjson": []byte(data)}}
}

func TestPlanSecretCopy(t *testing.T) {
	foreign := ownedCopy(corev1.SecretTypeDockerConfigJson, "admin's")
	foreign.Labels, foreign.Annotations = nil, nil
	otherSource := ownedCopy(corev1.SecretTypeDockerConfigJson, "x")
	otherSource.Annotations[SourceNameAnnotation] = "other"
	for name, c := range map[string]struct {
		src, cur *corev1.Secret
		want     CopyAction
		reason   string // a substring of the refusal
	}{
		"new dockerconfigjson": {src: pullSecret(corev1.SecretTypeDockerConfigJson, "a"), want: CopyCreate},
		"new dockercfg":        {src: pullSecret(corev1.SecretTypeDockercfg, "a"), want: CopyCreate},
		"opaque":               {src: pullSecret(corev1.SecretTypeOpaque, "a"), want: CopyRefused, reason: `type "Opaque"`},
		"service account token": {src: pullSecret(corev1.SecretTypeServiceAccountToken, "a"), want: CopyRefused,
			reason: "only kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg"},
		"opaque over own copy": {src: pullSecret(corev1.SecretTypeOpaque, "a"), cur: ownedCopy(corev1.SecretTypeDockerConfigJson, "a"),
			want: CopyRefused, reason: `type "Opaque"`},
		"up to date": {src: pullSecret(corev1.SecretTypeDockerConfigJson, "a"), cur: ownedCopy(corev1.SecretTypeDockerConfigJson, "a"),
			want: CopyUpToDate},
		"stale": {src: pullSecret(corev1.SecretTypeDockerConfigJson, "b"), cur: ownedCopy(corev1.SecretTypeDockerConfigJson, "a"),
			want: CopyUpdate},
		"type changed": {src: pullSecret(corev1.SecretTypeDockercfg, "a"), cur: ownedCopy(corev1.SecretTypeDockerConfigJson, "a"),
			want: CopyReplace},
		"unmarked secret at the copy's name": {src: pullSecret(corev1.SecretTypeDockerConfigJson, "a"), cur: foreign,
			want: CopyRefused, reason: "was not created by Kruise"},
		"copy of another source": {src: pullSecret(corev1.SecretTypeDockerConfigJson, "a"), cur: otherSource,
			want: CopyRefused, reason: "annotation " + SourceNameAnnotation + "=reg missing"},
	} {
		got, reason := PlanSecretCopy(c.src, c.cur, "ns", "reg")
		if got != c.want || !strings.Contains(reason, c.reason) || (c.want == CopyRefused) != (reason != "") {
			t.Errorf("%s: got %v %q, want %v with %q", name, got, reason, c.want, c.reason)
		}
	}
}

func secretsReconciler(t *testing.T, objs ...client.Object) (*Reconciler, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	return &Reconciler{Client: c, Reader: c}, c
}

// TestSyncSecretsNeverTouchesForeignSecrets checks what lands in the daemons' namespace: an Opaque
// pull secret is not copied, and a secret at the copy's name that Kruise did not mark is neither
// overwritten nor deleted.
func TestSyncSecretsNeverTouchesForeignSecrets(t *testing.T) {
	ctx := context.Background()
	j := &v1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j"},
		Spec: v1beta1.ImagePullJobSpec{ImagePullJobTemplate: v1beta1.ImagePullJobTemplate{PullSecrets: []string{"reg"}}}}

	r, c := secretsReconciler(t, pullSecret(corev1.SecretTypeOpaque, "token"))
	_, err := r.syncSecrets(ctx, j)
	var refused *SecretRefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("an Opaque pull secret: want a refusal, got %v", err)
	}
	copies := &corev1.SecretList{}
	if err := c.List(ctx, copies, client.InNamespace(appspub.KruiseDaemonConfigNamespace)); err != nil || len(copies.Items) != 0 {
		t.Fatalf("an Opaque pull secret was copied: %v %v", copies.Items, err)
	}

	foreign := ownedCopy(corev1.SecretTypeDockerConfigJson, "admin's")
	foreign.Labels = map[string]string{SourceNamespaceLabel: "ns"} // labelled, but no source-name annotation
	foreign.Annotations = nil
	r, c = secretsReconciler(t, pullSecret(corev1.SecretTypeDockerConfigJson, "user's"), foreign)
	if _, err := r.syncSecrets(ctx, j); !errors.As(err, &refused) {
		t.Fatalf("an unmarked secret at the copy's name: want a refusal, got %v", err)
	}
	if err := r.collectSecrets(ctx, "ns"); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), got); err != nil {
		t.Fatalf("the foreign secret is gone: %v", err)
	}
	if string(got.Data[".dockerconfigjson"]) != "admin's" {
		t.Errorf("the foreign secret was overwritten: %q", got.Data[".dockerconfigjson"])
	}

	r, c = secretsReconciler(t, pullSecret(corev1.SecretTypeDockerConfigJson, "v2"), ownedCopy(corev1.SecretTypeDockerConfigJson, "v1"))
	refs, err := r.syncSecrets(ctx, j)
	if err != nil || len(refs) != 1 || refs[0].Name != CopyName("ns", "reg") {
		t.Fatalf("refresh of Kruise's copy: %v %v", refs, err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: appspub.KruiseDaemonConfigNamespace, Name: refs[0].Name}, got); err != nil ||
		string(got.Data[".dockerconfigjson"]) != "v2" {
		t.Errorf("Kruise's copy not refreshed: %q %v", got.Data[".dockerconfigjson"], err)
	}
}
