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
				ours.readsBackWithoutLoss(t, data)
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

// readsBackWithoutLoss creates the manifest for real and checks that every value it holds is
// returned by a read.
func (r *dryRunner) readsBackWithoutLoss(t *testing.T, manifest []byte) {
	t.Helper()
	obj, ri, err := r.resource(t, manifest)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ri.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	defer func() { _ = ri.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}) }()
	got, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"spec", "metadata"} {
		if lost := missing(obj.Object[field], got.Object[field], field); len(lost) > 0 {
			t.Errorf("lost on the way through the API server: %s", strings.Join(lost, "; "))
		}
	}
}

// missing lists the paths of want whose values are not in got.
func missing(want, got any, path string) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{path + ": not an object"}
		}
		var out []string
		for k, v := range w {
			out = append(out, missing(v, g[k], path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: list %v read back as %v", path, w, got)}
		}
		var out []string
		for i := range w {
			out = append(out, missing(w[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return []string{fmt.Sprintf("%s: %v read back as %v", path, want, got)}
		}
		return nil
	}
}

// create dry-runs the manifest with the field validation kubectl uses by default (Strict).
func (r *dryRunner) create(t *testing.T, manifest []byte) error {
	t.Helper()
	obj, ri, err := r.resource(t, manifest)
	if err != nil {
		return err
	}
	_, err = ri.Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
	return err
}

// resource decodes the manifest and finds the client for its kind, placing namespaced objects in
// the runner's namespace. An error means the kind is not served.
func (r *dryRunner) resource(t *testing.T, manifest []byte) (*unstructured.Unstructured, dynamic.ResourceInterface, error) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(manifest, &obj.Object); err != nil {
		t.Fatal(err)
	}
	gvk := obj.GroupVersionKind()
	mapping, err := r.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, nil, fmt.Errorf("%s not served: %w", gvk, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return obj, r.dyn.Resource(mapping.Resource), nil
	}
	obj.SetNamespace(r.ns)
	return obj, r.dyn.Resource(mapping.Resource).Namespace(r.ns), nil
}
