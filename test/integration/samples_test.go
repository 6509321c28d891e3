package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/test/compat"
	"github.com/kruise-ng/kruise/test/harness"
)

// Users' existing OpenKruise manifests must be accepted: every OpenKruise v1.9.0 sample is created
// (server-side dry run) against our generated CRDs.
func TestOpenKruiseSamplesAreAccepted(t *testing.T) {
	oracle := compat.OracleDir(harness.RepoRoot())
	files, err := filepath.Glob(filepath.Join(oracle, "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (set KRUISE_COMPAT_DIR): %v", oracle, err)
	}
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "samples-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	dyn := dynamic.NewForConfigOrDie(cfg)
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &obj.Object); err != nil {
				t.Fatal(err)
			}
			gvk := obj.GroupVersionKind()
			if pending, crd, err := compat.Pending(oracle, gvk.Group, gvk.Kind); err != nil {
				t.Fatal(err)
			} else if pending {
				t.Skipf("kind %s not implemented yet (%s pending in test/compat)", gvk.Kind, crd)
			}
			mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("the API server does not serve %s: %v", gvk, err)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				ri = dyn.Resource(mapping.Resource).Namespace(ns.Name)
				obj.SetNamespace(ns.Name)
			}
			if _, err := ri.Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
				t.Fatalf("sample rejected: %v", err)
			}
		})
	}
}
