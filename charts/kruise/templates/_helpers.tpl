{{- define "kruise.labels" -}}
app.kubernetes.io/name: kruise
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Values.managedBy | default .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "kruise.selector" -}}
app.kubernetes.io/name: kruise
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- /* The namespace of every namespaced object: installation.namespace, else the release's. */}}
{{- define "kruise.namespace" -}}
{{ .Values.installation.namespace | default .Release.Namespace }}
{{- end }}

{{- /*
Values OpenKruise's chart names differently (docs/install.md): its key, when set, wins over ours.
They are read with dig, being absent from values.yaml.
*/}}
{{- define "kruise.image" -}}
{{- $repo := dig "image" "repository" "" .Values.manager | default .Values.image.repository }}
{{- $tag := dig "image" "tag" "" .Values.manager | default .Values.image.tag | default .Chart.AppVersion }}
{{- printf "%s:%v" $repo $tag }}
{{- end }}

{{- define "kruise.manager.webhookPort" -}}
{{ dig "webhook" "port" 0 .Values.manager | default .Values.manager.webhookPort }}
{{- end }}

{{- define "kruise.manager.metricsPort" -}}
{{ dig "metrics" "port" 0 .Values.manager | default .Values.manager.metricsPort }}
{{- end }}

{{- define "kruise.manager.healthPort" -}}
{{ dig "healthProbe" "port" 0 .Values.manager | default .Values.manager.healthPort }}
{{- end }}

{{- define "kruise.daemon.healthPort" -}}
{{ dig "port" 0 .Values.daemon | default .Values.daemon.healthPort }}
{{- end }}

{{- define "kruise.webhookTimeout" -}}
{{ dig "webhookConfiguration" "timeoutSeconds" 0 .Values.AsMap | default .Values.webhook.timeoutSeconds }}
{{- end }}

{{- /* daemon.socketFile names the socket under daemon.socketLocation, as in OpenKruise's chart. */}}
{{- define "kruise.daemon.runtimeEndpoint" -}}
{{- with dig "socketFile" "" .Values.daemon -}}
unix://{{ trimSuffix "/" $.Values.daemon.socketLocation }}/{{ . }}
{{- else -}}
{{ .Values.daemon.runtimeEndpoint }}
{{- end }}
{{- end }}

{{- /* The sockets kruise-daemon looks for without an endpoint (pkg/node/criruntime). */}}
{{- define "kruise.daemon.knownSockets" -}}
/run/containerd/containerd.sock /var/run/containerd/containerd.sock /run/crio/crio.sock /var/run/crio/crio.sock
{{- end }}

{{- /* The extra env of a container: Kruise's extraEnv, then OpenKruise's extraEnvs (the daemon's). */}}
{{- define "kruise.extraEnv" -}}
{{- $env := concat (.extraEnv | default list) (dig "extraEnvs" list .) }}
{{- with $env }}
{{- toYaml . }}
{{- end }}
{{- end }}

{{- /* The KUBE_CACHE_MUTATION_DETECTOR variable, with enableKubeCacheMutationDetector. */}}
{{- define "kruise.cacheMutationDetector" -}}
{{- if .Values.enableKubeCacheMutationDetector -}}
- name: KUBE_CACHE_MUTATION_DETECTOR
  value: "true"
{{- end }}
{{- end }}

{{- /* --zap-log-level from a log.level: OpenKruise's klog verbosity N is logr's V(N). */}}
{{- define "kruise.logLevelArg" -}}
{{- $level := toString . }}
{{- if and $level (ne $level "<nil>") }}--zap-log-level={{ if eq $level "0" }}info{{ else }}{{ $level }}{{ end }}{{ end }}
{{- end }}

{{- define "kruise.serviceAccountAnnotations" -}}
{{- with .Values.serviceAccount.annotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- /* A looked-up object's "true" when this release created it (Helm's ownership annotations). */}}
{{- define "kruise.ownedByRelease" -}}
{{- $a := dig "metadata" "annotations" dict .obj }}
{{- if and (eq (get $a "meta.helm.sh/release-name") .root.Release.Name) (eq (get $a "meta.helm.sh/release-namespace") .root.Release.Namespace) }}true{{ end }}
{{- end }}

{{- /* "true" when the chart renders installation.namespace: asked to, or this release created it. */}}
{{- define "kruise.rendersNamespace" -}}
{{- $owned := include "kruise.ownedByRelease" (dict "root" . "obj" (lookup "v1" "Namespace" "" (include "kruise.namespace" .))) }}
{{- if or .Values.installation.createNamespace $owned }}true{{ end }}
{{- end }}

{{- define "kruise.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end }}
