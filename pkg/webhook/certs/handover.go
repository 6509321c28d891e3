package certs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServedByAnnotation on the Secret records, per replica, which CA signs the certificate it serves
// and when it last said so: {"<replica>":{"ca":"<sha256 of the CA PEM>","at":"<RFC 3339>"}}. The
// previous CA leaves the bundle only when every replica that reported within ReportTTL serves the
// current one, so a CA switch never leaves a replica serving a certificate the API server no
// longer trusts.
const ServedByAnnotation = "webhook.kruise.io/served-by"

type servedReport struct {
	CA string    `json:"ca"`
	At time.Time `json:"at"`
}

func fingerprint(certPEM []byte) string {
	sum := sha256.Sum256(certPEM)
	return hex.EncodeToString(sum[:])
}

func reports(secret *corev1.Secret) map[string]servedReport {
	out := map[string]servedReport{}
	_ = json.Unmarshal([]byte(secret.Annotations[ServedByAnnotation]), &out) // unreadable: nobody reported
	return out
}

// handedOver reports whether the Secret still lists a previous CA that no live replica needs: at
// least one replica reported, and every report younger than ReportTTL names the current CA.
func handedOver(secret *corev1.Secret, b *Bundle, opts Options) bool {
	if len(secret.Data[KeyPreviousCACert]) == 0 || b == nil {
		return false
	}
	now, current, live := opts.Clock.Now(), fingerprint(b.CACert), 0
	for _, r := range reports(secret) {
		if now.Sub(r.At) > opts.ReportTTL {
			continue
		}
		if r.CA != current {
			return false
		}
		live++
	}
	return live > 0
}

// Report records on the Secret that replica serves a certificate signed by caCert, unless a report
// saying so is younger than a third of ReportTTL; reports older than ReportTTL (replicas gone) are
// pruned on the way.
func Report(ctx context.Context, c client.Client, opts Options, replica string, caCert []byte) error {
	opts = opts.withDefaults()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: opts.SecretName}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				return nil // the next sync recreates it, and this replica reports then
			}
			return err
		}
		now, ca := opts.Clock.Now(), fingerprint(caCert)
		all := reports(secret)
		if r, ok := all[replica]; ok && r.CA == ca && now.Sub(r.At) < opts.ReportTTL/3 {
			return nil
		}
		maps.DeleteFunc(all, func(_ string, r servedReport) bool { return now.Sub(r.At) > opts.ReportTTL })
		all[replica] = servedReport{CA: ca, At: now.UTC().Truncate(time.Second)}
		raw, err := json.Marshal(all)
		if err != nil {
			return err
		}
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		secret.Annotations[ServedByAnnotation] = string(raw)
		if err := c.Update(ctx, secret); err != nil {
			return fmt.Errorf("report the served CA on secret %s/%s: %w", opts.Namespace, opts.SecretName, err)
		}
		return nil
	})
}
