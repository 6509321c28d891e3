package sandbox

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
)

// The API server's admission configuration has both webhook plugins present, to every webhook, a
// client certificate that kruise-manager's --webhook-client-ca-file verifies under its allowed
// name; the sandbox CA (which signs every user's certificate) is not that CA.
func TestWebhookClientFiles(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{pkiDir, configDir, kubeconfigsDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &Sandbox{State: State{Dir: dir}}
	if err := s.writeWebhookClientFiles(); err != nil {
		t.Fatal(err)
	}
	admission, err := os.ReadFile(filepath.Join(dir, configDir, admissionConfig))
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, kubeconfigsDir, webhookKubeconfig)
	for _, want := range []string{"kind: AdmissionConfiguration", "name: ValidatingAdmissionWebhook", "name: MutatingAdmissionWebhook",
		"kind: WebhookAdmissionConfiguration", `kubeConfigFile: "` + kubeconfig + `"`} {
		if !strings.Contains(string(admission), want) {
			t.Errorf("admission configuration lacks %q:\n%s", want, admission)
		}
	}
	if !contains(apiServerArgs(dir, Ports{}, false), "--admission-control-config-file="+filepath.Join(dir, configDir, admissionConfig)) {
		t.Error("the API server is not given the admission configuration")
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	auth := cfg.AuthInfos["*"]
	if auth == nil {
		t.Fatalf("no user * in %s: %v", kubeconfig, cfg.AuthInfos)
	}
	ca, err := pki.LoadAuthority(s.WebhookClientCAFile(), filepath.Join(dir, pkiDir, WebhookClientCA+".key"))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _ := os.ReadFile(auth.ClientCertificate)
	keyPEM, _ := os.ReadFile(auth.ClientKey)
	leaf, err := pki.ParseKeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.Verify(leaf.Cert, x509.ExtKeyUsageClientAuth, "", leaf.Cert.NotBefore.Add(2*certValidity/3)); err != nil || leaf.Cert.Subject.CommonName != WebhookClientName {
		t.Errorf("the API server's certificate (CN %s) does not verify against %s: %v", leaf.Cert.Subject.CommonName, s.WebhookClientCAFile(), err)
	}
	for _, want := range []string{"--webhook-client-ca-file=" + s.WebhookClientCAFile(), "--webhook-client-allowed-names=" + WebhookClientName} {
		if !contains(s.webhookClientArgs(), want) {
			t.Errorf("kruise-manager's flags lack %s", want)
		}
	}
}
