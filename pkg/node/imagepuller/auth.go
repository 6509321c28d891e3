package imagepuller

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// dockerHub is the registry of references without a registry host (e.g. "nginx:1.27").
const dockerHub = "docker.io"

// Registry is the registry host of an image reference: its first path element when that looks
// like a host (has a dot or a port, or is localhost), else Docker Hub.
func Registry(image string) string {
	first, _, found := strings.Cut(image, "/")
	if !found {
		return dockerHub
	}
	if strings.ContainsAny(first, ".:") || first == "localhost" {
		return first
	}
	return dockerHub
}

// registryKey normalises a key of a docker config ("https://index.docker.io/v1/", "host:port",
// "http://host/path") to a registry host comparable with Registry.
func registryKey(key string) string {
	k := key
	if strings.Contains(k, "://") {
		if u, err := url.Parse(k); err == nil {
			k = u.Host
		}
	}
	k, _, _ = strings.Cut(k, "/")
	switch k {
	case "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return dockerHub
	}
	return k
}

// dockerConfigEntry is one registry's credentials in a docker config.
type dockerConfigEntry struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	Auth          string `json:"auth,omitempty"`
	IdentityToken string `json:"identitytoken,omitempty"`
	RegistryToken string `json:"registrytoken,omitempty"`
}

// Credentials are the CRI auth configs that secret holds for registry, in the order of the
// secret's matching keys; a secret of another type, or without an entry for registry, gives none. A
// malformed secret is an error naming it.
func Credentials(secret *corev1.Secret, registry string) ([]*runtimeapi.AuthConfig, error) {
	var auths map[string]dockerConfigEntry
	switch secret.Type {
	case corev1.SecretTypeDockerConfigJson:
		var cfg struct {
			Auths map[string]dockerConfigEntry `json:"auths"`
		}
		if err := json.Unmarshal(secret.Data[corev1.DockerConfigJsonKey], &cfg); err != nil {
			return nil, fmt.Errorf("secret %s/%s: %s is not a docker config: %w", secret.Namespace, secret.Name, corev1.DockerConfigJsonKey, err)
		}
		auths = cfg.Auths
	case corev1.SecretTypeDockercfg:
		if err := json.Unmarshal(secret.Data[corev1.DockerConfigKey], &auths); err != nil {
			return nil, fmt.Errorf("secret %s/%s: %s is not a docker config: %w", secret.Namespace, secret.Name, corev1.DockerConfigKey, err)
		}
	default:
		return nil, fmt.Errorf("secret %s/%s has type %q; image pull secrets are %s or %s", secret.Namespace, secret.Name,
			secret.Type, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeDockercfg)
	}
	var out []*runtimeapi.AuthConfig
	for _, key := range slices.Sorted(maps.Keys(auths)) {
		e := auths[key]
		if registryKey(key) != registry {
			continue
		}
		a := &runtimeapi.AuthConfig{Username: e.Username, Password: e.Password, Auth: e.Auth,
			IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
		// ServerAddress stays empty: containerd parses it as a URL, and a bare "host:port" is not
		// one; the runtime matches the credentials to the image's registry itself.
		if a.Username == "" && a.Auth != "" {
			// "auth" is base64(user:password); runtimes accept either form, we hand both.
			if raw, err := base64.StdEncoding.DecodeString(a.Auth); err == nil {
				if u, p, ok := strings.Cut(string(raw), ":"); ok {
					a.Username, a.Password = u, p
				}
			}
		}
		out = append(out, a)
	}
	return out, nil
}
