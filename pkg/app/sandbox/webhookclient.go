package sandbox

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
)

// The API server authenticates itself to the webhooks it calls, and kruise-manager requires it to
// (docs/webhook-authentication.md): the sandbox's API server presents a client certificate of a CA
// of its own (not the sandbox CA, which signs every user's certificate) to every webhook, named in
// its admission configuration, and kruise-manager trusts that CA with --webhook-client-ca-file.
const (
	// WebhookClientCA is the base name, under DIR/pki, of the CA of the API server's webhook client
	// certificate (.crt, .key).
	WebhookClientCA = "webhook-client-ca"
	// WebhookClientName is the common name of that certificate (--webhook-client-allowed-names).
	WebhookClientName = "kube-apiserver-webhook-client"
	webhookClientPair = "apiserver-webhook-client"
	webhookKubeconfig = "webhook-client.kubeconfig"
	admissionConfig   = "admission.yaml"
)

// writeWebhookClientFiles issues the webhook client CA and the API server's certificate, and
// writes the kubeconfig that presents it to every webhook ("*") and the admission configuration
// that names that kubeconfig for both webhook admission plugins.
func (s *Sandbox) writeWebhookClientFiles() error {
	pkiPath := filepath.Join(s.Dir, pkiDir)
	ca, err := pki.NewAuthority("kruise-sandbox-webhook-client-ca", certValidity)
	if err != nil {
		return err
	}
	if _, _, err := ca.WriteFiles(pkiPath, WebhookClientCA); err != nil {
		return err
	}
	kp, err := ca.Issue(pki.Request{CommonName: WebhookClientName, Validity: certValidity})
	if err != nil {
		return err
	}
	certFile, keyFile, err := kp.WriteFiles(pkiPath, webhookClientPair)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos["*"] = &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}
	kubeconfig := filepath.Join(s.Dir, kubeconfigsDir, webhookKubeconfig)
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		return fmt.Errorf("write the API server's webhook kubeconfig: %w", err)
	}
	return os.WriteFile(filepath.Join(s.Dir, configDir, admissionConfig), []byte(admissionConfiguration(kubeconfig)), 0o644)
}

// admissionConfiguration has both webhook admission plugins present the client certificate of
// kubeconfig.
func admissionConfiguration(kubeconfig string) string {
	plugin := func(name string) string {
		return fmt.Sprintf(`- name: %s
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %q
`, name, kubeconfig)
	}
	return "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n" +
		plugin("ValidatingAdmissionWebhook") + plugin("MutatingAdmissionWebhook")
}

// WebhookClientCAFile is the CA file kruise-manager checks the API server's certificate with.
func (s *Sandbox) WebhookClientCAFile() string {
	return filepath.Join(s.Dir, pkiDir, WebhookClientCA+".crt")
}

// webhookClientArgs are kruise-manager's flags that require the API server's certificate.
func (s *Sandbox) webhookClientArgs() []string {
	return []string{"--webhook-client-ca-file=" + s.WebhookClientCAFile(), "--webhook-client-allowed-names=" + WebhookClientName}
}

// WebhookClientCertificate is the client certificate the API server presents to webhooks: a test
// that posts an admission to kruise-manager as the API server does presents it.
func (s *Sandbox) WebhookClientCertificate() (tls.Certificate, error) {
	dir := filepath.Join(s.Dir, pkiDir)
	return tls.LoadX509KeyPair(filepath.Join(dir, webhookClientPair+".crt"), filepath.Join(dir, webhookClientPair+".key"))
}
