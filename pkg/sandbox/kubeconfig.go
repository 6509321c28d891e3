package sandbox

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kruise-ng/kruise/pkg/pki"
)

// clusterName names the sandbox cluster and context in every kubeconfig it writes.
const clusterName = "kruise-sandbox"

// writeKubeconfig writes a kubeconfig for server that authenticates with the client certificate kp.
func writeKubeconfig(file, server string, caPEM []byte, kp pki.KeyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[clusterName] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[clusterName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: clusterName}
	cfg.CurrentContext = clusterName
	return clientcmd.WriteToFile(*cfg, file)
}

// KubeconfigFor issues a client certificate for user (CN) in groups (O) and writes a kubeconfig
// for it under DIR/kubeconfigs. Giving each client its own identity lets an audit log attribute
// every request to the component that made it.
func (s *Sandbox) KubeconfigFor(user string, groups ...string) (string, error) {
	ca, err := pki.LoadAuthority(filepath.Join(s.Dir, pkiDir, "ca.crt"), filepath.Join(s.Dir, pkiDir, "ca.key"))
	if err != nil {
		return "", fmt.Errorf("load sandbox CA: %w", err)
	}
	kp, err := ca.Issue(pki.Request{CommonName: user, Groups: groups, Validity: certValidity})
	if err != nil {
		return "", fmt.Errorf("issue client certificate for %s: %w", user, err)
	}
	file := filepath.Join(s.Dir, kubeconfigsDir, safeName(user)+".kubeconfig")
	return file, writeKubeconfig(file, s.Server(), ca.CertPEM, kp)
}

// safeName turns a user name such as system:kube-scheduler into a file name.
func safeName(user string) string {
	out := []rune(user)
	for i, r := range out {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			out[i] = '_'
		}
	}
	return string(out)
}
