package install

import (
	"strings"
	"testing"

	appspub "github.com/kruise-ng/kruise/apis/apps/pub"
)

// The chart's generated templates carry the values' expressions where the sandbox installer puts
// concrete values, and nothing of the sentinels.
func TestChartTemplates(t *testing.T) {
	files, err := ChartTemplates()
	if err != nil {
		t.Fatal(err)
	}
	const ns = `{{ include "kruise.namespace" . }}`
	for name, wants := range map[string][]string{
		"crds.yaml": {"{{- if .Values.crds.managed }}\n", "kind: CustomResourceDefinition", "helm.sh/resource-policy: keep",
			"name: " + WebhookServiceName + "\n          namespace: " + ns + "\n          path: " + ConversionPath},
		"rbac.yaml": {"name: kruise-manager-role", "name: kruise-daemon-role", "name: " + appspub.KruiseDaemonConfigNamespace,
			"kind: ServiceAccount\n  name: " + ManagerServiceAccount + "\n  namespace: " + ns,
			"kind: ServiceAccount\n  name: " + DaemonServiceAccount + "\n  namespace: " + ns,
			"- apiGroups:\n  {{- range .Values.installation.roleListGroups }}\n  - {{ . | quote }}\n  {{- end }}\n  resources:\n  - '*'\n  verbs:\n  - list\n"},
		"webhooks.yaml": {"failurePolicy: {{ .Values.webhook.failurePolicy }}", "failurePolicy: {{ .Values.webhook.podFailurePolicy }}",
			`timeoutSeconds: {{ include "kruise.webhookTimeout" . }}`, "{{- range .Values.webhook.excludedNamespaces }}",
			"- " + ns + "\n      {{- range .Values.webhook.excludedNamespaces }}\n      - {{ . | quote }}\n      {{- end }}"},
	} {
		text := string(files[name])
		if text == "" {
			t.Errorf("no %s", name)
			continue
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
		if strings.Contains(text, "chart-sentinel") {
			t.Errorf("%s keeps a sentinel", name)
		}
	}
	if strings.Contains(string(files["rbac.yaml"]), "kind: Namespace\nmetadata:\n  name: "+ns) {
		t.Error("the installation namespace is Helm's or templates/namespace.yaml's, not the generated RBAC's")
	}
}
