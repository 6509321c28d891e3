package monitoring

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"
)

const files = "../../charts/kruise/files/"

// rules are the alerting rules' expressions by alert name.
func rules(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(files + "prometheus-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Expr, For string
				Labels           map[string]string
				Annotations      map[string]string
			}
		}
	}
	if err := yaml.UnmarshalStrict(raw, &doc, func(d *json.Decoder) *json.Decoder { return d }); err != nil {
		t.Fatalf("prometheus-rules.yaml: %v", err)
	}
	out := map[string]string{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Labels["severity"] == "" {
				t.Errorf("rule %q: an alert needs its name and a severity", r.Alert)
			}
			out["alert "+r.Alert] = r.Expr
		}
	}
	return out
}

// queries are the dashboard's panel queries by panel title.
func queries(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(files + "grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	out := map[string]string{}
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			out["panel "+p.Title+" "+q.RefID] = q.Expr
		}
	}
	return out
}

// metricNames are the metric names an expression selects.
func metricNames(e parser.Expr) []string {
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					out = append(out, m.Value)
				}
			}
		}
		return nil
	})
	return out
}

// Every rule and dashboard query parses, and the metrics they name are exactly names.txt (which the
// e2e checks against the metrics a live kruise-manager serves).
func TestExpressionsParseAndNameTheListedMetrics(t *testing.T) {
	exprs := rules(t)
	for k, v := range queries(t) {
		exprs[k] = v
	}
	if len(exprs) < 10 {
		t.Fatalf("%d expressions, want the rules and the dashboard's queries", len(exprs))
	}
	var named []string
	for where, src := range exprs {
		e, err := parser.NewParser(parser.Options{}).ParseExpr(src)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", where, src, err)
			continue
		}
		names := metricNames(e)
		if len(names) == 0 {
			t.Errorf("%s: %q names no metric", where, src)
		}
		named = append(named, names...)
	}
	slices.Sort(named)
	named = slices.Compact(named)
	raw, err := os.ReadFile("names.txt")
	if err != nil {
		t.Fatal(err)
	}
	listed := strings.Fields(string(raw))
	if !slices.Equal(named, listed) {
		t.Errorf("the expressions name\n%s\nnames.txt lists\n%s\n(write the first into names.txt)", strings.Join(named, "\n"), strings.Join(listed, "\n"))
	}
}
