package callers

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// Kind is who a caller of the webhook server is, as its client certificate shows.
type Kind int

const (
	// Anonymous presented no client certificate.
	Anonymous Kind = iota
	// APIServer presented a certificate of the API server's client CA (Trust.ClientCAFile) with an
	// allowed name.
	APIServer
	// Replica presented a certificate of the webhook CA: another kruise-manager replica.
	Replica
)

// String names the kind in messages and metrics.
func (k Kind) String() string {
	switch k {
	case APIServer:
		return "apiserver"
	case Replica:
		return "replica"
	}
	return "anonymous"
}

// Trust holds the CAs of the callers the webhook server knows. Its zero value knows none but
// Replicas must be set before the server starts.
type Trust struct {
	// Replicas returns the webhook CA bundle (PEM: the current CA and, during a switch, the
	// previous one). It is called on each handshake and must be cheap.
	Replicas func() []byte
	// ClientCAFile names the PEM bundle of the CA(s) of the API server's client certificate; empty:
	// the API server is not expected to present one and anonymous callers are served. The file is
	// read again when it changes.
	ClientCAFile string
	// ClientNames, when not empty, are the common names accepted of ClientCAFile's certificates
	// (a CA that also signs other clients' certificates, such as a cluster CA).
	ClientNames []string
	// Exempt are registered paths anonymous callers are served on even when ClientCAFile is set.
	Exempt []string

	mu         sync.Mutex
	replicaPEM []byte
	clientPEM  []byte
	clientMod  time.Time
	clientSize int64
	roots      *roots
}

// roots are the parsed CAs of one version of the inputs, and the pool of both.
type roots struct {
	replicas, clients [][]byte // DER of the CA certificates
	pool              *x509.CertPool
	config            *tls.Config // the handshake config built on them, once built
}

// Required reports whether every caller but those of the Exempt paths must present a certificate.
func (t *Trust) Required() bool { return t.ClientCAFile != "" }

// Check reads the client CA file once, so that a bad file stops the manager at its start rather
// than at the first call.
func (t *Trust) Check() error {
	if t.ClientCAFile == "" {
		return nil
	}
	_, err := t.current()
	return err
}

// current are the roots of the current inputs, parsed again only when one changed.
func (t *Trust) current() (*roots, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := t.roots == nil
	if t.Replicas != nil {
		if r := t.Replicas(); !bytes.Equal(r, t.replicaPEM) {
			t.replicaPEM, changed = bytes.Clone(r), true
		}
	}
	if t.ClientCAFile != "" {
		st, err := os.Stat(t.ClientCAFile)
		if err != nil && t.clientPEM == nil {
			return nil, fmt.Errorf("--webhook-client-ca-file: %w", err)
		}
		if err == nil && (!st.ModTime().Equal(t.clientMod) || st.Size() != t.clientSize) {
			data, err := os.ReadFile(t.ClientCAFile)
			switch {
			case err != nil && t.clientPEM == nil:
				return nil, fmt.Errorf("--webhook-client-ca-file: %w", err)
			case err == nil && len(certificates(data)) == 0 && t.clientPEM == nil:
				return nil, fmt.Errorf("--webhook-client-ca-file %s holds no PEM certificate", t.ClientCAFile)
			case err == nil && len(certificates(data)) > 0:
				// A file being rewritten (empty for a moment) keeps the CAs read before.
				t.clientPEM, t.clientMod, t.clientSize, changed = data, st.ModTime(), st.Size(), true
			}
		}
	}
	if changed {
		t.roots = newRoots(certificates(t.replicaPEM), certificates(t.clientPEM))
	}
	return t.roots, nil
}

func newRoots(replicas, clients []*x509.Certificate) *roots {
	r := &roots{pool: x509.NewCertPool()}
	for _, c := range replicas {
		r.replicas = append(r.replicas, c.Raw)
		r.pool.AddCert(c)
	}
	for _, c := range clients {
		r.clients = append(r.clients, c.Raw)
		r.pool.AddCert(c)
	}
	return r
}

// certificates are the CA certificates of a PEM bundle; blocks that are not are skipped.
func certificates(data []byte) []*x509.Certificate {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return out
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && c.IsCA {
			out = append(out, c)
		}
	}
}

// ConfigureTLS is a webhook.Options TLSOpts entry: the server asks each client for a certificate
// and lets every handshake through; Classify verifies a certificate given against the current CAs,
// and one that does not verify counts as none (Guard decides per path). A handshake never fails
// for a certificate Kruise does not know: an API server that presents one to every webhook (an
// admission kubeconfig user "*") must still reach a manager not told its CA.
func (t *Trust) ConfigureTLS(base *tls.Config) {
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		r, err := t.current()
		if err != nil {
			return nil, err
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if r.config == nil {
			// Built at the first handshake, once the webhook server has set its certificate.
			c := base.Clone()
			c.GetConfigForClient = nil
			c.ClientAuth = tls.RequestClientCert
			r.config = c
		}
		return r.config, nil
	}
}

// Classify is who presented the connection's certificate; Anonymous without one that verifies
// against the current CAs for client authentication.
func (t *Trust) Classify(state *tls.ConnectionState) Kind {
	if state == nil || len(state.PeerCertificates) == 0 {
		return Anonymous
	}
	r, err := t.current()
	if err != nil {
		return Anonymous
	}
	intermediates := x509.NewCertPool()
	for _, c := range state.PeerCertificates[1:] {
		intermediates.AddCert(c)
	}
	chains, err := state.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: r.pool, Intermediates: intermediates,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return Anonymous
	}
	kind := Anonymous
	for _, chain := range chains {
		root := chain[len(chain)-1].Raw
		if containsDER(r.replicas, root) {
			return Replica
		}
		leaf := chain[0]
		if containsDER(r.clients, root) && (len(t.ClientNames) == 0 || slices.Contains(t.ClientNames, leaf.Subject.CommonName)) {
			kind = APIServer
		}
	}
	return kind
}

func containsDER(list [][]byte, der []byte) bool {
	return slices.ContainsFunc(list, func(d []byte) bool { return bytes.Equal(d, der) })
}

type kindKey struct{}

// WithKind is ctx carrying the caller's kind (Guard sets it on every request it passes on).
func WithKind(ctx context.Context, k Kind) context.Context {
	return context.WithValue(ctx, kindKey{}, k)
}

// Of is the kind of the caller of the request ctx belongs to; Anonymous when no Guard ran.
func Of(ctx context.Context) Kind {
	k, _ := ctx.Value(kindKey{}).(Kind)
	return k
}

// FileCertificate is a tls.Config GetClientCertificate that presents the pair in certFile and
// keyFile, read at each handshake (the files are renewed in place); a replica presents its serving
// certificate so.
func FileCertificate(certFile, keyFile string) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("load the replica's client certificate: %w", err)
		}
		return &pair, nil
	}
}
