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

	"github.com/kruise-ng/kruise/apis/apps/v1beta1"
	"github.com/kruise-ng/kruise/pkg/install"
)

// DaemonConfigNamespace holds the copies of pull secrets that kruise-daemons may read: the daemons
// get secrets in this namespace only, never the users' originals.
const DaemonConfigNamespace = install.DaemonConfigNamespace

// Labels and annotations of a pull secret's copy.
const (
	SourceNamespaceLabel = "apps.kruise.io/pull-secret-source-namespace"
	SourceNameAnnotation = "apps.kruise.io/pull-secret-source-name"
)

// CopyName is the name of the copy of secret ns/name in DaemonConfigNamespace: "<ns>.<name>"
// (namespaces have no dots, so it is unique), hashed when that is too long for a name.
func CopyName(ns, name string) string {
	if n := ns + "." + name; len(n) <= 253 {
		return n
	}
	sum := sha256.Sum256([]byte(ns + "/" + name))
	return ns + "." + hex.EncodeToString(sum[:16])
}

// syncSecrets copies the job's pull secrets into DaemonConfigNamespace (creating or refreshing the
// copies) and returns references to the copies. A missing secret is an error naming it.
func (r *Reconciler) syncSecrets(ctx context.Context, job *v1beta1.ImagePullJob) ([]v1beta1.NodeImageReferenceObject, error) {
	var refs []v1beta1.NodeImageReferenceObject
	for _, name := range job.Spec.PullSecrets {
		src := &corev1.Secret{}
		if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: name}, src); err != nil {
			return nil, fmt.Errorf("pull secret %s/%s: %w", job.Namespace, name, err)
		}
		want := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: DaemonConfigNamespace, Name: CopyName(job.Namespace, name),
			Labels:      map[string]string{SourceNamespaceLabel: job.Namespace},
			Annotations: map[string]string{SourceNameAnnotation: name}}, Type: src.Type, Data: src.Data}
		cur := &corev1.Secret{}
		err := r.Reader.Get(ctx, client.ObjectKeyFromObject(want), cur)
		switch {
		case apierrors.IsNotFound(err):
			if err := r.Client.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("copy pull secret %s/%s into %s: %w", job.Namespace, name, DaemonConfigNamespace, err)
			}
		case err != nil:
			return nil, err
		case cur.Type != want.Type || !maps.EqualFunc(cur.Data, want.Data, slices.Equal):
			if cur.Type != want.Type { // type is immutable
				if err := r.Client.Delete(ctx, cur); err != nil {
					return nil, err
				}
				return nil, fmt.Errorf("pull secret %s/%s changed type; its copy is being replaced", job.Namespace, name)
			}
			cur.Data = want.Data
			if err := r.Client.Update(ctx, cur); err != nil {
				return nil, err
			}
		}
		refs = append(refs, v1beta1.NodeImageReferenceObject{Namespace: DaemonConfigNamespace, Name: want.Name})
	}
	return refs, nil
}

// collectSecrets deletes the copies of ns's pull secrets that no remaining job of ns uses.
func (r *Reconciler) collectSecrets(ctx context.Context, ns string) error {
	copies := &corev1.SecretList{}
	if err := r.Reader.List(ctx, copies, client.InNamespace(DaemonConfigNamespace), client.MatchingLabels{SourceNamespaceLabel: ns}); err != nil {
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
		if !used[c.Annotations[SourceNameAnnotation]] {
			if err := r.Client.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}
