{{- /*
kruise.checks refuses, naming the value, what the chart would otherwise do wrong or silently
ignore: OpenKruise chart keys Kruise cannot honour, and upgrades of a release (OpenKruise's chart
or ours) that would make Helm delete what holds every Kruise object. Rendered by manager.yaml.
*/}}
{{- define "kruise.checks" -}}
{{- $ns := include "kruise.namespace" . }}
{{- if dig "externalCerts" "annotations" dict .Values.AsMap }}
{{- fail "externalCerts.annotations: kruise-manager issues its own webhook certificates and writes the CA bundles itself (docs/manager.md); a CA injector (cert-manager's) would fight it over them. Remove externalCerts.annotations" }}
{{- end }}
{{- if contains "EnableExternalCerts=true" .Values.featureGates }}
{{- fail "featureGates: EnableExternalCerts=true: kruise-manager always issues its own webhook certificates (Secret kruise-webhook-certs) and reads none issued by another tool. Remove the gate" }}
{{- end }}
{{- if dig "credentialProvider" "enable" false .Values.daemon }}
{{- fail "daemon.credentialProvider.enable: kruise-daemon runs no kubelet credential provider plugin; it pulls with the ImagePullJob's pullSecrets. Remove daemon.credentialProvider" }}
{{- end }}
{{- $okImage := dig "image" "repository" "" .Values.manager }}
{{- if regexMatch "(^|/)openkruise/kruise-manager$" $okImage }}
{{- fail (printf "manager.image.repository: %s is OpenKruise's image; this chart runs Kruise's (ghcr.io/kruise-ng/kruise, both binaries): remove the key, or name your mirror of Kruise's image" $okImage) }}
{{- end }}
{{- if and .Values.daemon.enabled (not (include "kruise.daemon.runtimeEndpoint" .)) }}
{{- $dir := printf "%s/" (trimSuffix "/" .Values.daemon.socketLocation) }}
{{- $found := false }}
{{- range splitList " " (include "kruise.daemon.knownSockets" .) }}
{{- if hasPrefix $dir . }}{{ $found = true }}{{ end }}
{{- end }}
{{- if not $found }}
{{- fail (printf "daemon.socketLocation: %s holds none of the sockets kruise-daemon finds by itself (%s): name the socket with daemon.socketFile (its file name under socketLocation) or daemon.runtimeEndpoint" .Values.daemon.socketLocation (include "kruise.daemon.knownSockets" .)) }}
{{- end }}
{{- end }}
{{- if and .Values.installation.createNamespace (eq $ns .Release.Namespace) (not (include "kruise.ownedByRelease" (dict "root" . "obj" (lookup "v1" "Namespace" "" $ns)))) }}
{{- fail (printf "installation.createNamespace: the release's namespace %s exists before the chart's objects (Helm keeps the release there): leave createNamespace false, or set installation.namespace to another namespace" $ns) }}
{{- end }}
{{- /* OpenKruise's chart, by default, keeps its release in "default" and creates kruise-system. */}}
{{- if ne $ns "kruise-system" }}
{{- $old := lookup "v1" "Namespace" "" "kruise-system" }}
{{- if and (include "kruise.ownedByRelease" (dict "root" . "obj" $old)) (ne (dig "metadata" "annotations" "helm.sh/resource-policy" "" $old) "keep") }}
{{- fail (printf "installation.namespace: this release created the namespace kruise-system (OpenKruise's chart does), which holds Kruise's objects; rendering them in %s would make Helm delete kruise-system and everything in it. Set installation.namespace=kruise-system" $ns) }}
{{- end }}
{{- end }}
{{- if not .Values.crds.managed }}
{{- $crd := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" "clonesets.apps.kruise.io" }}
{{- if and (include "kruise.ownedByRelease" (dict "root" . "obj" $crd)) (ne (dig "metadata" "annotations" "helm.sh/resource-policy" "" $crd) "keep") }}
{{- fail "crds.managed: this release installed Kruise's CRDs without helm.sh/resource-policy=keep (OpenKruise's chart does); with crds.managed=false Helm would delete them and every Kruise object. Upgrade once with crds.managed=true (Kruise's CRDs carry keep), then set it false" }}
{{- end }}
{{- end }}
{{- end }}
