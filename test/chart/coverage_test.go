package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// openKruiseChart is OpenKruise v1.9.0's chart folder of the compat test data (values.yaml and
// README.md): ../shared/compat beside the checkout, or $KRUISE_COMPAT_DIR.
func openKruiseChart(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KRUISE_COMPAT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "compat", "openkruise-v1.9.0")
	}
	dir = filepath.Join(dir, "chart")
	if _, err := os.Stat(filepath.Join(dir, "values.yaml")); err != nil {
		t.Fatalf("OpenKruise's chart values (set KRUISE_COMPAT_DIR to the openkruise-v1.9.0 folder): %v", err)
	}
	return dir
}

// openKruiseKeys are the keys of OpenKruise's values.yaml (every path to a value that is not an
// object) and of its README's parameter tables.
func openKruiseKeys(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 {
			keys[prefix] = true
			return
		}
		for k, sub := range m {
			walk(strings.TrimPrefix(prefix+"."+k, "."), sub)
		}
	}
	walk("", values)
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-zA-Z.]+)` +\\|").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], ".") || values[m[1]] != nil {
			keys[m[1]] = true // the feature-gate table's names have neither
		}
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// documentedKeys are the keys docs/install.md's "Coming from OpenKruise's chart" table names; a
// key written `.tag` after `manager.image.repository` is manager.image.tag.
func documentedKeys(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Coming from OpenKruise's chart")
	if !ok {
		t.Fatal(`docs/install.md has no "Coming from OpenKruise's chart"`)
	}
	var keys []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		last := ""
		for _, m := range regexp.MustCompile("`([a-zA-Z.]+)`").FindAllStringSubmatch(cell, -1) {
			key := m[1]
			if strings.HasPrefix(key, ".") && last != "" {
				key = last[:strings.LastIndex(last, ".")] + key
			}
			keys, last = append(keys, key), key
		}
	}
	return keys
}

// Every key of OpenKruise's chart is in docs/install.md's table (itself or an enclosing key), so a
// key was decided on, not forgotten.
func TestEveryOpenKruiseKeyDocumented(t *testing.T) {
	documented := documentedKeys(t)
	for _, key := range openKruiseKeys(t, openKruiseChart(t)) {
		covered := false
		for k := key; k != ""; {
			if slices.Contains(documented, k) {
				covered = true
				break
			}
			i := strings.LastIndex(k, ".")
			if i < 0 {
				break
			}
			k = k[:i]
		}
		if !covered {
			t.Errorf("OpenKruise's chart key %s is not in docs/install.md's \"Coming from OpenKruise's chart\" table", key)
		}
	}
}

// OpenKruise's values.yaml as a whole, every key at OpenKruise's default, is accepted once its image
// is the user's mirror of Kruise's; as it is, its image is refused by name.
func TestOpenKruiseDefaults(t *testing.T) {
	values := filepath.Join(openKruiseChart(t), "values.yaml")
	objs := render(t, "default", "-f", values, "--set", "manager.image.repository=registry.corp.example/mirror/kruise,manager.image.tag=v0.1.0")
	if objs.find("Namespace", "kruise-system") == nil || objs.find("DaemonSet", "kruise-daemon").GetNamespace() != "kruise-system" {
		t.Error("OpenKruise's defaults (installation.namespace kruise-system, createNamespace) did not take effect")
	}
	if msg := refusal(t, "default", "-f", values); !strings.Contains(msg, "manager.image.repository") {
		t.Errorf("OpenKruise's own image: refused with %q, want manager.image.repository named", msg)
	}
}
