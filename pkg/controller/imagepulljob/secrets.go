package imagepulljob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
)

// Labels and annotations of a pull secret's copy.
const (
	SourceNamespaceLabel = "apps.kruise.io/pull-secret-source-namespace"
	SourceNameAnnotation = "apps.kruise.io/pull-secret-source-name"
)

// CopyName is the name of the copy of secret ns/name in appspub.KruiseDaemonConfigNamespace: "<ns>.<name>"
// (namespaces have no dots, so it is unique), hashed when that is too long for a name.
func CopyName(ns, name string) string {
	if n := ns + "." + name; len(n) <= 253 {
		return n
	}
	sum := sha256.Sum256([]byte(ns + "/" + name))
	return ns + "." + hex.EncodeToString(sum[:16])
}

// CopyAction is what syncSecrets does about the copy of one pull secret.
type CopyAction int

const (
	// CopyUpToDate: the copy exists, is Kruise's and equals the source.
	CopyUpToDate CopyAction = iota
	// CopyCreate: there is no copy yet; create it.
	CopyCreate
	// CopyUpdate: Kruise's copy has stale data; update it.
	CopyUpdate
	// CopyReplace: Kruise's copy has another type (immutable); delete it, to be created again.
	CopyReplace
	// CopyRefused: nothing is written; the reason says why.
	CopyRefused
)

// PullSecretTypes are the Secret types copied for the daemons: the registry credential types
// the kubelet also accepts as imagePullSecrets.
var PullSecretTypes = []corev1.SecretType{corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg}

// Owned reports whether c carries the marks of Kruise's copy of secret ns/name; Kruise writes and
// deletes only such secrets in appspub.KruiseDaemonConfigNamespace.
func Owned(c *corev1.Secret, ns, name string) bool {
	return c.Labels[SourceNamespaceLabel] == ns && c.Annotations[SourceNameAnnotation] == name
}

// PlanSecretCopy decides what to do about the copy of src (a pull secret of namespace ns, named
// name) given cur, the secret already at the copy's name (nil: none). Only PullSecretTypes are
// copied, and a secret Kruise did not mark as its copy is never overwritten or deleted.
func PlanSecretCopy(src, cur *corev1.Secret, ns, name string) (CopyAction, string) {
	if !slices.Contains(PullSecretTypes, src.Type) {
		return CopyRefused, fmt.Sprintf("pull secret %s/%s has type %q; only %s and %s secrets are copied for kruise-daemon",
			ns, name, src.Type, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg)
	}
	switch {
	case cur == nil:
		return CopyCreate, ""
	case !Owned(cur, ns, name):
		return CopyRefused, fmt.Sprintf("secret %s/%s (where pull secret %s/%s is copied) was not created by Kruise for it "+
			"(label %s=%s and annotation %s=%s missing); it is left as it is and the secret is not copied",
			appspub.KruiseDaemonConfigNamespace, cur.Name, ns, name, SourceNamespaceLabel, ns, SourceNameAnnotation, name)
	case cur.Type != src.Type:
		return CopyReplace, ""
	case !maps.EqualFunc(cur.Data, src.Data, slices.Equal):
		return CopyUpdate, ""
	}
	return CopyUpToDate, ""
}

// SecretRefusedError says that a job's pull secret was not copied, and why; the job cannot start
// pulls until its spec or the secret changes, so it is reported, not retried.
type SecretRefusedError struct{ Reason string }

func (e *SecretRefusedError) Error() string { return e.Reason }

// syncSecrets copies the job's pull secrets into appspub.KruiseDaemonConfigNamespace (creating or refreshing the
// copies) and returns references to the copies. A missing secret is an error naming it; a refused
// one (see PlanSecretCopy) a *SecretRefusedError, with nothing written for any later secret.
func (r *Reconciler) syncSecrets(ctx context.Context, job *v1beta1.ImagePullJob) ([]v1beta1.NodeImageReferenceObject, error) {
	var refs []v1beta1.NodeImageReferenceObject
	for _, name := range job.Spec.PullSecrets {
		src := &corev1.Secret{}
		if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, src); err != nil {
			return nil, fmt.Errorf("pull secret %s/%s: %w", job.Namespace, name, err)
		}
		want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: appspub.KruiseDaemonConfigNamespace, Name: CopyName(job.Namespace, name),
			Labels:      map[string]string{SourceNamespaceLabel: job.Namespace},
			Annotations: map[string]string{SourceNameAnnotation: name}}, Type: src.Type, Data: src.Data}
		cur := &corev1.Secret{}
		if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(want), cur); apierrors.IsNotFound(err) {
			cur = nil
		} else if err != nil {
			return nil, err
		}
		if err := r.applySecretCopy(ctx, src, cur, want, job.Namespace, name); err != nil {
			return nil, err
		}
		// One copy per source secret, shared by the jobs that name it: OpenKruise v1.9's "batch"
		// mode, whose references go with their image's entry rather than with a job.
		refs = append(refs, v1beta1.NodeImageReferenceObject{Namespace: appspub.KruiseDaemonConfigNamespace, Name: want.Name,
			Mode: v1beta1.NodeImageReferenceObjectModeBatch})
	}
	return refs, nil
}

// applySecretCopy carries out PlanSecretCopy's decision for the copy want of src.
func (r *Reconciler) applySecretCopy(ctx context.Context, src, cur, want *corev1.Secret, ns, name string) error {
	action, reason := PlanSecretCopy(src, cur, ns, name)
	switch action {
	case CopyRefused:
		return &SecretRefusedError{Reason: reason}
	case CopyCreate:
		if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("copy pull secret %s/%s into %s: %w", ns, name, appspub.KruiseDaemonConfigNamespace, err)
		}
	case CopyReplace:
		uid, rv := cur.UID, cur.ResourceVersion
		if err := r.Client.Delete(ctx, cur, client.Preconditions{UID: &uid, ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
			return err
		}
		return fmt.Errorf("pull secret %s/%s changed type; its copy is being replaced", ns, name)
	case CopyUpdate:
		cur.Data = want.Data
		if err := r.Client.Update(ctx, cur); err != nil {
			return err
		}
	}
	return nil
}

// collectSecrets deletes the copies of ns's pull secrets that no remaining job of ns uses.
func (r *Reconciler) collectSecrets(ctx context.Context, ns string) error {
	copies := &corev1.SecretList{}
	if err := r.Reader.List(ctx, copies, client.InNamespace(appspub.KruiseDaemonConfigNamespace), client.MatchingLabels{SourceNamespaceLabel: ns}); err != nil {
		return err
	}
	if len(copies.Items) == 0 {
		return nil
	}
	jobs := &v1beta1.ImagePullJobList{}
	if err := r.Client.List(ctx, jobs, client.InNamespace(ns)); err != nil {
		return err
	}
	used := map[string]bool{}
	for _, j := range jobs.Items {
		for _, s := range j.Spec.PullSecrets {
			used[s] = true
		}
	}
	for i := range copies.Items {
		c := &copies.Items[i]
		if src := c.Annotations[SourceNameAnnotation]; src != "" && Owned(c, ns, src) && !used[src] {
			uid, rv := c.UID, c.ResourceVersion
			if err := r.Client.Delete(ctx, c, client.Preconditions{UID: &uid, ResourceVersion: &rv}); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}
