// Package wings checks the shape of pkg/: the wings the folder tree shows and which wing may import
// which, that every package name is unique and that every package says what it owns. It runs in
// `make lint`, from `go list`, so a new package or import is checked the moment it is written.
package wings

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/kruise-ng/kruise/"

// Wings are pkg/'s top folders, each with what it holds and the wings it may import (besides
// itself, apis/ and the standard and third-party libraries).
var wings = map[string]struct {
	holds   string
	imports []string
}{
	"app":        {"entry points: the assemblies of the binaries, the installer, the sandbox", []string{"controller", "webhook", "core", "machinery", "node", "platform"}},
	"controller": {"the controllers, one package per kind or concern", []string{"core", "machinery", "platform"}},
	"webhook":    {"admission: defaulting, validation, the pod webhooks and their registrars", []string{"core", "machinery", "platform"}},
	"machinery":  {"shared workload machinery that writes: the pod writer, the in-place engine, pre-download, the workload finder", []string{"core", "platform"}},
	"core":       {"pure domain cores: what the kinds mean, as functions of objects", nil},
	"node":       {"the node agent's parts (kruise-daemon)", []string{"core", "platform"}},
	"platform":   {"infrastructure with no Kruise domain: certificates, memory limits, metrics auth, version", nil},
}

// clientImports are what a pure core may not import: it decides from objects, never by asking a
// cluster.
var clientImports = []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go"}

type pkg struct {
	ImportPath, Name, Doc, Dir string
	Imports, TestImports       []string
	GoFiles                    []string
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"pkg/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// wingOf is the wing of a package path under the module's pkg/ ("" outside it).
func wingOf(path string) string {
	rel, ok := strings.CutPrefix(path, module+"pkg/")
	if !ok {
		return ""
	}
	w, _, _ := strings.Cut(rel, "/")
	return w
}

// violations lists, for p, every import of another wing that p's wing may not import, and every
// client import of a core package.
func violations(p pkg) []string {
	w := wingOf(p.ImportPath)
	var out []string
	for _, imp := range p.Imports {
		if iw := wingOf(imp); iw != "" && iw != w && !slices.Contains(wings[w].imports, iw) {
			out = append(out, fmt.Sprintf("%s (%s) imports %s (%s)", p.ImportPath, w, imp, iw))
		}
		if w == "core" {
			for _, c := range clientImports {
				if strings.HasPrefix(imp, c) {
					out = append(out, fmt.Sprintf("%s (core) imports a client: %s", p.ImportPath, imp))
				}
			}
		}
	}
	return out
}

func TestEveryPackageIsInAWing(t *testing.T) {
	for _, p := range list(t) {
		if _, ok := wings[wingOf(p.ImportPath)]; !ok {
			t.Errorf("%s is in no wing; pkg/ holds only:\n%s", p.ImportPath, describe())
		}
	}
}

func TestWingsImportOnlyWhatTheyMay(t *testing.T) {
	for _, p := range list(t) {
		for _, v := range violations(p) {
			t.Error(v)
		}
	}
}

// A controller is reached through the manager only: no controller imports another.
func TestNoControllerImportsAnother(t *testing.T) {
	for _, p := range list(t) {
		if wingOf(p.ImportPath) != "controller" {
			continue
		}
		for _, imp := range p.Imports {
			if wingOf(imp) == "controller" {
				t.Errorf("%s imports controller %s: move what they share down to core or machinery", p.ImportPath, imp)
			}
		}
	}
}

func TestPackageNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, p := range list(t) {
		if prev, ok := seen[p.Name]; ok {
			t.Errorf("package name %s is used by %s and %s", p.Name, prev, p.ImportPath)
		}
		seen[p.Name] = p.ImportPath
	}
}

// Every package says what it owns, in a doc.go of its own.
func TestEveryPackageHasADocGo(t *testing.T) {
	for _, p := range list(t) {
		if !slices.Contains(p.GoFiles, "doc.go") || !strings.HasPrefix(p.Doc, "Package "+p.Name+" ") {
			t.Errorf("%s: want a doc.go whose comment starts \"Package %s ...\" (doc: %q)", p.ImportPath, p.Name, p.Doc)
		}
	}
}

// The rules themselves can fail: an import across wings the table forbids is reported.
func TestViolationsAreFound(t *testing.T) {
	bad := pkg{ImportPath: module + "pkg/core/x", Imports: []string{module + "pkg/machinery/engine", "sigs.k8s.io/controller-runtime/pkg/client", module + "apis/apps/pub"}}
	if got := violations(bad); len(got) != 2 {
		t.Errorf("violations of a core package importing machinery and a client: %v, want 2", got)
	}
	ok := pkg{ImportPath: module + "pkg/webhook/x", Imports: []string{module + "pkg/core/podgate", module + "pkg/machinery/workloadfinder"}}
	if got := violations(ok); len(got) != 0 {
		t.Errorf("violations of an allowed import: %v", got)
	}
}

// describe lists the wings and what each holds.
func describe() string {
	var ks []string
	for k := range wings {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "  pkg/%s: %s\n", k, wings[k].holds)
	}
	return b.String()
}
