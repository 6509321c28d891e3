package integration

import (
	"context"
	"fmt"
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
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kruise-ng/kruise/test/compat"
	"github.com/kruise-ng/kruise/test/harness"
)

// Users' existing OpenKruise manifests behave the same with Kruise: every OpenKruise v1.9.0 sample
// gets the same answer (accepted, or rejected with the same message) from an API server holding our
// generated CRDs as from one holding OpenKruise's own CRDs. (Some of OpenKruise's samples are
// scaffolding that its own schema rejects; they must be rejected identically.)
func TestOpenKruiseSamplesBehaveAsWithOpenKruise(t *testing.T) {
	oracle := compat.OracleDir(harness.RepoRoot())
	files, err := filepath.Glob(filepath.Join(oracle, "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (set KRUISE_COMPAT_DIR): %v", oracle, err)
	}
	theirs, err := harness.StartAPIServerWithCRDs(filepath.Join(oracle, "crds"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = theirs.Stop() }()
	ours, oracleServer := newDryRunner(t, cfg), newDryRunner(t, theirs.Config)
	accepted := 0
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			errOurs, errTheirs := ours.create(t, data), oracleServer.create(t, data)
			switch {
			case errOurs == nil && errTheirs == nil:
				accepted++
			case errOurs == nil || errTheirs == nil:
				t.Fatalf("answers differ: Kruise %v, OpenKruise %v", errOurs, errTheirs)
			case errOurs.Error() != errTheirs.Error():
				t.Fatalf("rejected differently:\n Kruise:     %v\n OpenKruise: %v", errOurs, errTheirs)
			default:
				t.Logf("rejected by both, identically: %v", errOurs)
			}
		})
	}
	if accepted == 0 {
		t.Fatal("no sample was accepted by either: the comparison proves nothing")
	}
}

// dryRunner creates objects with a server-side dry run in a namespace of its own.
type dryRunner struct {
	ns     string
	mapper meta.RESTMapper
	dyn    dynamic.Interface
}

func newDryRunner(t *testing.T, c *rest.Config) *dryRunner {
	t.Helper()
	ns, err := kubernetes.NewForConfigOrDie(c).CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "samples"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &dryRunner{
		ns:     ns.Name,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(c))),
		dyn:    dynamic.NewForConfigOrDie(c),
	}
}

// create dry-runs the manifest with the field validation kubectl uses by default (Strict).
func (r *dryRunner) create(t *testing.T, manifest []byte) error {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(manifest, &obj.Object); err != nil {
		t.Fatal(err)
	}
	gvk := obj.GroupVersionKind()
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s not served: %w", gvk, err)
	}
	var ri dynamic.ResourceInterface = r.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = r.dyn.Resource(mapping.Resource).Namespace(r.ns)
		obj.SetNamespace(r.ns)
	}
	_, err = ri.Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	return err
}
