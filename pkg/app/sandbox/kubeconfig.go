package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kruise-ng/kruise/pkg/platform/pki"
)

// clusterName names the sandbox cluster and context in every kubeconfig it writes.
const clusterName = "kruise-sandbox"

// writeKubeconfig writes a kubeconfig for server that authenticates with the client certificate kp.
func writeKubeconfig(file, server string, caPEM []byte, kp pki.KeyPair) error {
	return writeKubeconfigAs(file, server, caPEM, &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM})
}

// writeKubeconfigAs writes a kubeconfig for server that authenticates as auth says.
func writeKubeconfigAs(file, server string, caPEM []byte, auth *clientcmdapi.AuthInfo) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[clusterName] = auth
	cfg.Contexts[clusterName] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: clusterName}
	cfg.CurrentContext = clusterName
	return clientcmd.WriteToFile(*cfg, file)
}

// KubeconfigFor issues a client certificate for user (CN) in groups (O) and writes a kubeconfig
// for it under DIR/kubeconfigs. Giving each client its own identity lets an audit log attribute
// every request to the component that made it.
func (s *Sandbox) KubeconfigFor(user string, groups ...string) (string, error) {
	return s.kubeconfigAt(safeName(user), s.Server(), user, groups...)
}

// kubeconfigAt is KubeconfigFor with the server the kubeconfig names (a Front in front of the API
// server, say), written to DIR/kubeconfigs/base.kubeconfig.
func (s *Sandbox) kubeconfigAt(base, server, user string, groups ...string) (string, error) {
	ca, err := pki.LoadAuthority(filepath.Join(s.Dir, pkiDir, "ca.crt"), filepath.Join(s.Dir, pkiDir, "ca.key"))
	if err != nil {
		return "", fmt.Errorf("load sandbox CA: %w", err)
	}
	kp, err := ca.Issue(pki.Request{CommonName: user, Groups: groups, Validity: certValidity})
	if err != nil {
		return "", fmt.Errorf("issue client certificate for %s: %w", user, err)
	}
	file := filepath.Join(s.Dir, kubeconfigsDir, base+".kubeconfig")
	return file, writeKubeconfig(file, server, ca.CertPEM, kp)
}

// serviceAccountTokenValidity is how long a token the sandbox requests for a component lasts: the
// sandbox's life (tokens a kubelet projects into pods are renewed; the sandbox's host processes
// are not, so they get a long one).
const serviceAccountTokenValidity = 30 * 24 * time.Hour

// KubeconfigForServiceAccount requests a token of service account namespace/name bound to the
// object bound (the API server adds a bound pod's or node's name to the token's user info, as for
// a component running in a pod) and writes a kubeconfig for it under DIR/kubeconfigs.
func (s *Sandbox) KubeconfigForServiceAccount(ctx context.Context, namespace, name string, bound authenticationv1.BoundObjectReference) (string, error) {
	cs, err := s.clientset()
	if err != nil {
		return "", err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(serviceAccountTokenValidity / time.Second)), BoundObjectRef: &bound}}
	tok, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of service account %s/%s bound to %s %s: %w", namespace, name, bound.Kind, bound.Name, err)
	}
	caPEM, err := os.ReadFile(filepath.Join(s.Dir, pkiDir, "ca.crt"))
	if err != nil {
		return "", err
	}
	file := filepath.Join(s.Dir, kubeconfigsDir, safeName("system:serviceaccount:"+namespace+":"+name)+".kubeconfig")
	return file, writeKubeconfigAs(file, s.Server(), caPEM, &clientcmdapi.AuthInfo{Token: tok.Status.Token})
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
