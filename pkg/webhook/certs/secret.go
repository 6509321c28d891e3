package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
)

// Keys of the Secret that holds the webhook certificates.
const (
	KeyCACert         = "ca.crt"
	KeyCAKey          = "ca.key"
	KeyPreviousCACert = "ca-previous.crt"
	KeyServingCert    = "tls.crt"
	KeyServingKey     = "tls.key"
)

// Options say where the certificates live and what they must cover.
type Options struct {
	// Namespace and SecretName locate the Secret shared by every replica.
	Namespace, SecretName string
	// DNSNames and IPs are the names the webhook server is reached by (the Service's DNS names,
	// or 127.0.0.1 when the API server calls it by URL).
	DNSNames []string
	IPs      []net.IP
	// CAValidity and CertValidity are the lifetimes of newly issued certificates.
	CAValidity, CertValidity time.Duration
	// RenewBefore is how long before expiry a certificate is replaced.
	RenewBefore time.Duration
	// ReportTTL is how long a replica's report of the CA it serves counts (ServedByAnnotation);
	// replicas repeat it every third of it, so a replica that is gone stops holding the previous CA
	// in the bundle after ReportTTL.
	ReportTTL time.Duration
	// Clock decides expiry; nil means the real clock.
	Clock clock.PassiveClock
}

func (o Options) withDefaults() Options {
	if o.CAValidity == 0 {
		o.CAValidity = 10 * 365 * 24 * time.Hour
	}
	if o.CertValidity == 0 {
		o.CertValidity = 365 * 24 * time.Hour
	}
	if o.RenewBefore == 0 {
		o.RenewBefore = o.CertValidity / 4
	}
	if o.ReportTTL == 0 {
		o.ReportTTL = 15 * time.Minute
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return o
}

// Bundle is the TLS material in use.
type Bundle struct {
	// CABundle holds the current CA and, during a CA switch, the previous one.
	CABundle []byte
	// CACert is the current CA, which signed ServingCert.
	CACert []byte
	// ServingCert and ServingKey are the webhook server's certificate and key (PEM).
	ServingCert, ServingKey []byte
	// RenewAt is when Ensure will next replace a certificate.
	RenewAt time.Time
}

// Ensure returns the certificates from the Secret, creating or renewing them first when they are
// missing, unreadable, do not cover the configured names, or expire within RenewBefore.
func Ensure(ctx context.Context, c client.Client, opts Options) (*Bundle, error) {
	return EnsureServing(ctx, c, opts, nil)
}

// EnsureServing is Ensure for a replica that serves a certificate signed by servedCA (PEM; nil when it
// serves none yet). When the Secret has lost that CA (deleted, or its CA replaced because the CA or
// its key is unusable), servedCA stays in the bundle as the previous CA, so API servers keep trusting
// the replicas that still serve the old pair; it is dropped once every replica reports serving the
// new CA (see handedOver).
func EnsureServing(ctx context.Context, c client.Client, opts Options, servedCA []byte) (*Bundle, error) {
	opts = opts.withDefaults()
	served := map[string][]byte{}
	if len(servedCA) > 0 {
		served[KeyCACert] = servedCA
	}
	for attempt := 0; attempt < 5; attempt++ {
		secret := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: opts.SecretName}, secret)
		if apierrors.IsNotFound(err) {
			data, b, err := issue(nil, served, opts)
			if err != nil {
				return nil, err
			}
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: opts.SecretName},
				Type:       corev1.SecretTypeOpaque,
				Data:       data,
			}
			if err := c.Create(ctx, secret); apierrors.IsAlreadyExists(err) {
				continue // another replica was first; adopt its certificates
			} else if err != nil {
				return nil, fmt.Errorf("create secret %s/%s: %w", opts.Namespace, opts.SecretName, err)
			}
			return b, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get secret %s/%s: %w", opts.Namespace, opts.SecretName, err)
		}
		ca, b, why := evaluate(secret.Data, opts)
		if why == "" && !handedOver(secret, b, opts) {
			return b, nil
		}
		var data map[string][]byte
		if why == "" { // every replica serves the current CA: the previous one is trusted no longer
			why = "every replica serves the current CA"
			data = maps.Clone(secret.Data)
			delete(data, KeyPreviousCACert)
			b.CABundle = data[KeyCACert]
		} else {
			old := secret.Data
			if ca == nil && len(old[KeyPreviousCACert]) == 0 && len(servedCA) > 0 && !bytes.Equal(old[KeyCACert], servedCA) {
				old = maps.Clone(old) // the Secret's CA is not the one served: keep trusting the served one
				old[KeyCACert] = servedCA
			}
			if data, b, err = issue(ca, old, opts); err != nil {
				return nil, err
			}
		}
		secret.Data = data
		if err := c.Update(ctx, secret); apierrors.IsConflict(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("renew certificates in secret %s/%s (%s): %w", opts.Namespace, opts.SecretName, why, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("secret %s/%s kept changing while renewing certificates", opts.Namespace, opts.SecretName)
}

// evaluate checks the Secret's certificates. It returns the CA when it can keep signing, the bundle
// when nothing needs renewal, and otherwise why something must be renewed.
func evaluate(data map[string][]byte, opts Options) (ca *pki.Authority, b *Bundle, why string) {
	now := opts.Clock.Now()
	ca, err := pki.ParseAuthority(data[KeyCACert], data[KeyCAKey])
	if err != nil {
		return nil, nil, "no usable CA: " + err.Error()
	}
	if now.Add(opts.RenewBefore).After(ca.Cert.NotAfter) {
		return nil, nil, "CA expires at " + ca.Cert.NotAfter.Format(time.RFC3339)
	}
	leaf, err := pki.ParseKeyPair(data[KeyServingCert], data[KeyServingKey])
	if err != nil {
		return ca, nil, "no usable serving certificate: " + err.Error()
	}
	if now.Add(opts.RenewBefore).After(leaf.Cert.NotAfter) {
		return ca, nil, "serving certificate expires at " + leaf.Cert.NotAfter.Format(time.RFC3339)
	}
	for _, host := range hosts(opts) {
		if err := ca.Verify(leaf.Cert, x509.ExtKeyUsageServerAuth, host, now); err != nil {
			return ca, nil, fmt.Sprintf("serving certificate does not cover %s: %v", host, err)
		}
	}
	return ca, &Bundle{
		CABundle:    caBundle(data[KeyCACert], data[KeyPreviousCACert], now),
		CACert:      data[KeyCACert],
		ServingCert: data[KeyServingCert],
		ServingKey:  data[KeyServingKey],
		RenewAt:     earliest(ca.Cert.NotAfter, leaf.Cert.NotAfter).Add(-opts.RenewBefore),
	}, ""
}

// issue creates new certificates: a serving certificate signed by ca, or by a new CA when ca is
// nil (the replaced CA, if still valid, stays in the bundle as the previous one).
func issue(ca *pki.Authority, old map[string][]byte, opts Options) (map[string][]byte, *Bundle, error) {
	data := map[string][]byte{}
	now := opts.Clock.Now()
	if ca == nil {
		var err error
		if ca, err = pki.NewAuthorityAt("kruise-webhook-ca", now, opts.CAValidity); err != nil {
			return nil, nil, err
		}
		if prev := old[KeyCACert]; len(prev) > 0 && !expired(prev, now) {
			data[KeyPreviousCACert] = prev
		}
	} else if prev := old[KeyPreviousCACert]; len(prev) > 0 && !expired(prev, now) {
		data[KeyPreviousCACert] = prev
	}
	leaf, err := ca.Issue(pki.Request{CommonName: "kruise-webhook", DNSNames: opts.DNSNames, IPs: opts.IPs, Server: true,
		Validity: opts.CertValidity, Start: now})
	if err != nil {
		return nil, nil, err
	}
	data[KeyCACert], data[KeyCAKey] = ca.CertPEM, ca.KeyPEM
	data[KeyServingCert], data[KeyServingKey] = leaf.CertPEM, leaf.KeyPEM
	return data, &Bundle{
		CABundle:    caBundle(data[KeyCACert], data[KeyPreviousCACert], now),
		CACert:      data[KeyCACert],
		ServingCert: leaf.CertPEM,
		ServingKey:  leaf.KeyPEM,
		RenewAt:     earliest(ca.Cert.NotAfter, leaf.Cert.NotAfter).Add(-opts.RenewBefore),
	}, nil
}

func hosts(opts Options) []string {
	out := append([]string(nil), opts.DNSNames...)
	for _, ip := range opts.IPs {
		out = append(out, ip.String())
	}
	return out
}

func caBundle(current, previous []byte, now time.Time) []byte {
	if len(previous) == 0 || expired(previous, now) || bytes.Equal(current, previous) {
		return current
	}
	return append(append(append([]byte(nil), current...), '\n'), previous...)
}

func expired(certPEM []byte, now time.Time) bool {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return true
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	return err != nil || now.After(cert.NotAfter)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
