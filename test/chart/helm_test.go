// Package chart checks charts/kruise as Helm renders it: every key of OpenKruise v1.9's chart takes
// effect or is refused naming the key (values-openkruise.yaml), and upgrading a release that
// OpenKruise's chart installed deletes neither its namespace nor its CRDs. `make chart` runs it with
// bin/helm (HELM overrides it).
package chart

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// chartDir is charts/kruise from this folder.
const chartDir = "../../charts/kruise"

// helm runs the helm binary and returns what it printed, its error carrying what it said on stderr.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("HELM")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "helm")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing: run `make tools` (%v)", bin, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// objects are the manifests of one rendering.
type objects []*unstructured.Unstructured

// render runs `helm template kruise charts/kruise` in the release namespace ns with args and
// decodes what it prints.
func render(t *testing.T, ns string, args ...string) objects {
	t.Helper()
	out, err := helm(t, append([]string{"template", "kruise", chartDir, "--namespace", ns}, args...)...)
	if err != nil {
		t.Fatalf("helm template %s: %v", strings.Join(args, " "), err)
	}
	return decode(t, out)
}

// refusal runs `helm template` with args, which must fail, and returns Helm's message.
func refusal(t *testing.T, ns string, args ...string) string {
	t.Helper()
	if _, err := helm(t, append([]string{"template", "kruise", chartDir, "--namespace", ns}, args...)...); err != nil {
		return err.Error()
	}
	t.Errorf("helm template %s: accepted, want refused", strings.Join(args, " "))
	return ""
}

func decode(t *testing.T, manifests string) objects {
	t.Helper()
	var objs objects
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decode helm's output: %v", err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// find returns the object of kind and name (the first, whatever its namespace), or nil.
func (o objects) find(kind, name string) *unstructured.Unstructured {
	for _, u := range o {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

// count is how many objects of kind there are.
func (o objects) count(kind string) int {
	n := 0
	for _, u := range o {
		if u.GetKind() == kind {
			n++
		}
	}
	return n
}

// typed converts the object of kind and name into into; a missing object fails the test.
func (o objects) typed(t *testing.T, kind, name string, into any) {
	t.Helper()
	u := o.find(kind, name)
	if u == nil {
		t.Fatalf("no %s %s rendered", kind, name)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
}
