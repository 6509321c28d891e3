package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	appsv1beta1 "github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/controller/imagepulljob"
	"github.com/kruise-ng/kruise/test/harness"
)

// An ImagePullJob's pull secrets reach kruise-daemon's namespace only as docker-config copies
// marked as Kruise's: an Opaque secret is not copied, a secret there that Kruise did not mark is
// neither overwritten nor deleted (the job starts no pull and says why), and a docker-config
// secret is copied with the marks and removed with its last job.
func TestImagePullJobSecretCopies(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	node := nodeToPullOn(t, c)
	secret := func(name string, typ corev1.SecretType) {
		key := corev1.DockerConfigJsonKey
		if typ == corev1.SecretTypeOpaque {
			key = "token"
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: typ,
			Data: map[string][]byte{key: []byte(`{"auths":{}}`)}}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	job := func(name, pullSecret string) {
		j := &appsv1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: appsv1beta1.ImagePullJobSpec{Image: "registry.local/secret-test:" + name, ImagePullJobTemplate: appsv1beta1.ImagePullJobTemplate{
				Selector:         &appsv1beta1.ImagePullJobNodeSelector{Names: []string{node}},
				PullSecrets:      []string{pullSecret},
				CompletionPolicy: appsv1beta1.ImagePullJobCompletionPolicy{Type: appsv1beta1.ImagePullJobCompletionNever}}}}
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	waitMessage := func(name, want string) {
		t.Helper()
		harness.Eventually(t, 30*time.Second, "job "+name+" says "+want, func() (bool, string) {
			j := &appsv1beta1.ImagePullJob{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
				return false, err.Error()
			}
			return strings.Contains(j.Status.Message, want), fmt.Sprintf("status %+v", j.Status)
		})
	}
	daemonNS := appspub.KruiseDaemonConfigNamespace

	secret("opaque", corev1.SecretTypeOpaque)
	job("opaque", "opaque")
	waitMessage("opaque", fmt.Sprintf(`pulls not started: pull secret %s/opaque has type "Opaque"`, ns))
	if _, err := cs.CoreV1().Secrets(daemonNS).Get(ctx, imagepulljob.CopyName(ns, "opaque"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Opaque secret was copied for the daemons (get: %v)", err)
	}

	// An administrator's secret sits where the copy of ns/reg would go.
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: daemonNS, Name: imagepulljob.CopyName(ns, "reg")},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"admin":{}}}`)}}
	if _, err := cs.CoreV1().Secrets(daemonNS).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Secrets(daemonNS).Delete(context.Background(), foreign.Name, metav1.DeleteOptions{})
	})
	secret("reg", corev1.SecretTypeDockerConfigJson)
	job("reg", "reg")
	waitMessage("reg", "was not created by Kruise")
	if err := c.Delete(ctx, &appsv1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reg"}}); err != nil {
		t.Fatal(err)
	}
	// The job is gone: its (would-be) copy is collected, but the foreign secret stays untouched.
	secret("good", corev1.SecretTypeDockerConfigJson)
	job("good", "good")
	harness.Eventually(t, 30*time.Second, "the copy of ns/good, marked as Kruise's", func() (bool, string) {
		s, err := cs.CoreV1().Secrets(daemonNS).Get(ctx, imagepulljob.CopyName(ns, "good"), metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return imagepulljob.Owned(s, ns, "good"), fmt.Sprintf("labels %v annotations %v", s.Labels, s.Annotations)
	})
	got, err := cs.CoreV1().Secrets(daemonNS).Get(ctx, foreign.Name, metav1.GetOptions{})
	if err != nil || string(got.Data[corev1.DockerConfigJsonKey]) != `{"auths":{"admin":{}}}` || len(got.Labels) != 0 {
		t.Errorf("the administrator's secret was touched: %v %v %q", err, got.Labels, got.Data[corev1.DockerConfigJsonKey])
	}
	if err := c.Delete(ctx, &appsv1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good"}}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the copy removed with its last job", func() (bool, string) {
		_, err := cs.CoreV1().Secrets(daemonNS).Get(ctx, imagepulljob.CopyName(ns, "good"), metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// Pull secret references in NodeImages as OpenKruise v1.9 writes and cleans them: Kruise's copy is
// referenced with mode "batch" and stays while its image has tags; a reference without a mode
// (OpenKruise's per-job secrets before v1.9) is dropped when a job lets the image go and its secret
// no longer exists, and kept while it does.
func TestNodeImagePullSecretModes(t *testing.T) {
	ctx := context.Background()
	c := kruiseClient(t)
	ns := namespace(t)
	node := nodeToPullOn(t, c)
	daemonNS := appspub.KruiseDaemonConfigNamespace
	for _, s := range []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reg"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: daemonNS, Name: "kept-" + ns}}} {
		s.Type, s.Data = corev1.SecretTypeDockerConfigJson, map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}
		if _, err := cs.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Secrets(daemonNS).Delete(context.Background(), "kept-"+ns, metav1.DeleteOptions{})
	})
	image := "registry.local/modes-" + ns
	for _, tag := range []string{"a", "b"} {
		j := &appsv1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tag},
			Spec: appsv1beta1.ImagePullJobSpec{Image: image + ":" + tag, ImagePullJobTemplate: appsv1beta1.ImagePullJobTemplate{
				Selector:         &appsv1beta1.ImagePullJobNodeSelector{Names: []string{node}},
				PullSecrets:      []string{"reg"},
				CompletionPolicy: appsv1beta1.ImagePullJobCompletionPolicy{Type: appsv1beta1.ImagePullJobCompletionNever}}}}
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	batch := appsv1beta1.NodeImageReferenceObject{Namespace: daemonNS, Name: imagepulljob.CopyName(ns, "reg"), Mode: appsv1beta1.NodeImageReferenceObjectModeBatch}
	gone := appsv1beta1.NodeImageReferenceObject{Namespace: daemonNS, Name: "gone-" + ns}
	kept := appsv1beta1.NodeImageReferenceObject{Namespace: daemonNS, Name: "kept-" + ns}
	secretsOf := func() ([]appsv1beta1.NodeImageReferenceObject, int, error) {
		ni := &appsv1beta1.NodeImage{}
		err := c.Get(ctx, client.ObjectKey{Name: node}, ni)
		img := ni.Spec.Images[image]
		return img.PullSecrets, len(img.Tags), err
	}
	harness.Eventually(t, 30*time.Second, "both tags asked for with the batch reference", func() (bool, string) {
		refs, tags, err := secretsOf()
		return err == nil && tags == 2 && len(refs) == 1 && refs[0] == batch, fmt.Sprintf("%d tags, refs %v, %v", tags, refs, err)
	})
	// OpenKruise's older references, as a cluster taken over holds them.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ni := &appsv1beta1.NodeImage{}
		if err := c.Get(ctx, client.ObjectKey{Name: node}, ni); err != nil {
			return err
		}
		img := ni.Spec.Images[image]
		img.PullSecrets = append(img.PullSecrets, gone, kept)
		ni.Spec.Images[image] = img
		return c.Update(ctx, ni)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &appsv1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "tag a released with the gone secret's reference", func() (bool, string) {
		refs, tags, err := secretsOf()
		ok := err == nil && tags == 1 && len(refs) == 2 && refs[0] == batch && refs[1] == kept
		return ok, fmt.Sprintf("%d tags, refs %v, %v", tags, refs, err)
	})
	if err := c.Delete(ctx, &appsv1beta1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 30*time.Second, "the batch reference gone with its image", func() (bool, string) {
		refs, tags, err := secretsOf()
		return err == nil && tags == 0 && len(refs) == 0, fmt.Sprintf("%d tags, refs %v, %v", tags, refs, err)
	})
}

// nodeToPullOn is the name of a node whose NodeImage exists.
func nodeToPullOn(t *testing.T, c client.Client) string {
	t.Helper()
	nodes := &appsv1beta1.NodeImageList{}
	harness.Eventually(t, 30*time.Second, "a NodeImage to pull on", func() (bool, string) {
		err := c.List(context.Background(), nodes)
		return err == nil && len(nodes.Items) > 0, fmt.Sprintf("%d NodeImages, %v", len(nodes.Items), err)
	})
	return nodes.Items[0].Name
}
