// Package integration holds user stories run against a real kube-apiserver and etcd.
package integration

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kruise-ng/kruise/test/harness"
)

// api is the package's shared API server; cfg its admin configuration.
var (
	api *harness.APIServer
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	harness.Main(m, func() (func() error, error) {
		var err error
		api, err = harness.StartAPIServer()
		if err != nil {
			return nil, err
		}
		cfg = api.Config
		return api.Stop, nil
	})
}
