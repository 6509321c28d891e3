package chart

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The monitoring objects are off by default; switched on, the ServiceMonitor scrapes the metrics
// Service as /metrics is served (HTTPS with a token by default, plain HTTP with metrics.secure
// false), the PrometheusRule carries the chart's alerts and the ConfigMap the dashboard, each with
// the labels asked for.
func TestMonitoringObjects(t *testing.T) {
	if objs := render(t, "kruise-system"); objs.count("ServiceMonitor")+objs.count("PrometheusRule") != 0 || objs.find("ConfigMap", "kruise-grafana-dashboard") != nil {
		t.Fatal("monitoring objects rendered by default")
	}
	on := []string{"--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.prometheusRule.enabled=true",
		"--set", "metrics.grafanaDashboard.enabled=true", "--set", "metrics.serviceMonitor.labels.release=prometheus"}
	objs := render(t, "kruise-system", on...)
	sm := objs.find("ServiceMonitor", "kruise-manager")
	if sm == nil || objs.find("Service", "kruise-manager-metrics") == nil {
		t.Fatal("no ServiceMonitor or metrics Service")
	}
	if sm.GetLabels()["release"] != "prometheus" {
		t.Errorf("ServiceMonitor labels %v, want release=prometheus", sm.GetLabels())
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["scheme"] != "https" || endpoints[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("endpoints %v, want port metrics over https", endpoints)
	}
	plain := render(t, "kruise-system", append(on, "--set", "metrics.secure=false")...).find("ServiceMonitor", "kruise-manager")
	if endpoints, _, _ := unstructured.NestedSlice(plain.Object, "spec", "endpoints"); endpoints[0].(map[string]any)["scheme"] != "http" {
		t.Errorf("endpoints %v with metrics.secure=false, want http", endpoints)
	}
	rule := objs.find("PrometheusRule", "kruise")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var alerts []string
	for _, g := range groups {
		rules, _ := g.(map[string]any)["rules"].([]any)
		for _, r := range rules {
			alerts = append(alerts, r.(map[string]any)["alert"].(string))
		}
	}
	for _, want := range []string{"KruiseRolloutStuck", "KruisePodUnavailableBudgetExhausted", "KruiseWebhookErrors",
		"KruiseWebhookCertificateExpiresSoon", "KruiseManagerNotLeading"} {
		if !strings.Contains(strings.Join(alerts, " "), want) {
			t.Errorf("PrometheusRule alerts %v, want %s", alerts, want)
		}
	}
	cm := objs.find("ConfigMap", "kruise-grafana-dashboard")
	dash, _, _ := unstructured.NestedString(cm.Object, "data", "kruise.json")
	var parsed struct{ UID string }
	if err := json.Unmarshal([]byte(dash), &parsed); err != nil || parsed.UID != "kruise-overview" || cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap: uid %q (%v), labels %v", parsed.UID, err, cm.GetLabels())
	}
}
