package imagepuller

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Any pull secret's data, of either type, gives credentials or an error naming the secret, never a
// panic; and a .dockercfg means what the same entries under "auths" mean in a .dockerconfigjson.
func FuzzCredentials(f *testing.F) {
	auth := base64.StdEncoding.EncodeToString([]byte("bob:s3cret"))
	for _, seed := range []struct {
		cfg   string
		image string
	}{
		{`{"https://index.docker.io/v1/":{"username":"hub","password":"p"},"127.0.0.1:5000":{"auth":"` + auth + `"}}`, "127.0.0.1:5000/app:v1"},
		{`{"http://127.0.0.1:5000/v2/":{"identitytoken":"t","registrytoken":"r"},"ghcr.io":{"auth":"not base64"}}`, "127.0.0.1:5000/app"},
		{`{"localhost":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("no-colon")) + `"},"://bad url/":{}}`, "localhost/app"},
		{`{"docker.io":{"username":"u","auth":"` + auth + `"}}`, "nginx:1.27"},
		{`{}`, "nginx"}, {`null`, "ghcr.io/kruise/app"}, {`{"r":1}`, "r/app"}, {`[]`, ""}, {`{"auths":`, "x"}, {``, "x"},
	} {
		f.Add(false, []byte(seed.cfg), seed.image)
		f.Add(true, []byte(`{"auths":`+seed.cfg+`}`), seed.image)
	}
	f.Fuzz(func(t *testing.T, dockercfg bool, data []byte, image string) {
		registry := Registry(image)
		secret := func(typ corev1.SecretType, key string, data []byte) *corev1.Secret {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "reg"}, Type: typ, Data: map[string][]byte{key: data}}
		}
		s := secret(corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, data)
		if dockercfg {
			s = secret(corev1.SecretTypeDockercfg, corev1.DockerConfigKey, data)
		}
		got, err := Credentials(s, registry)
		if err != nil {
			if !strings.Contains(err.Error(), "ns/reg") {
				t.Fatalf("error %q does not name the secret", err)
			}
			return
		}
		for i, a := range got {
			if a == nil {
				t.Fatalf("credentials %d of %d are nil", i, len(got))
			}
		}
		if !dockercfg || !json.Valid(data) {
			return
		}
		wrapped := secret(corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey, append(append([]byte(`{"auths":`), data...), '}'))
		if same, err := Credentials(wrapped, registry); err != nil || !reflect.DeepEqual(same, got) {
			t.Fatalf(".dockercfg gives %v, the same entries in a .dockerconfigjson %v (error %v)", got, same, err)
		}
	})
}
