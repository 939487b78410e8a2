{{/* Names, labels and the parts every pod shares. */}}

{{- define "gomoku-archive.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release name + chart name, unless the release name already contains the chart name. */}}
{{- define "gomoku-archive.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gomoku-archive.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "gomoku-archive.labels" -}}
helm.sh/chart: {{ include "gomoku-archive.chart" . }}
{{ include "gomoku-archive.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: gomoku-archive
{{- end }}

{{- define "gomoku-archive.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gomoku-archive.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of one component: pass (dict "root" $ "component" "api"). */}}
{{- define "gomoku-archive.componentLabels" -}}
{{ include "gomoku-archive.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gomoku-archive.componentSelectorLabels" -}}
{{ include "gomoku-archive.selectorLabels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* repository:tag, or repository@digest when a digest is given (then exactly that image). */}}
{{- define "gomoku-archive.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "gomoku-archive.secretName" -}}
{{- default (include "gomoku-archive.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "gomoku-archive.configMapName" -}}
{{- include "gomoku-archive.fullname" . }}
{{- end }}

{{/* Settings and credentials, as every long-running container reads them. */}}
{{- define "gomoku-archive.envFrom" -}}
- configMapRef:
    name: {{ include "gomoku-archive.configMapName" . }}
- secretRef:
    name: {{ include "gomoku-archive.secretName" . }}
{{- end }}

{{/* The Secret's contents as a pod annotation, so a changed credential rolls the pods (which
read the environment once). The chart's own Secret is hashed as rendered; an existingSecret is
read from the cluster with `lookup` at install/upgrade time (empty under `helm template`), with
secrets.existingSecretChecksum, the operator's word that it changed, hashed in too. */}}
{{- define "gomoku-archive.secretChecksum" -}}
{{- if .Values.secrets.existingSecret }}
{{- $found := lookup "v1" "Secret" .Release.Namespace .Values.secrets.existingSecret }}
{{- $data := (get ($found | default dict) "data") | default dict | toJson }}
{{- if .Values.secrets.existingSecretChecksum }}
{{- printf "%s\n%s" $data .Values.secrets.existingSecretChecksum | sha256sum }}
{{- else }}
{{- $data | sha256sum }}
{{- end }}
{{- else }}
{{- include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end }}

{{/* A Deployment's own annotations: Stakater Reloader's, when asked for. */}}
{{- define "gomoku-archive.deploymentAnnotations" -}}
{{- if .Values.secrets.reloaderAnnotation }}
annotations:
  secret.reloader.stakater.com/reload: {{ include "gomoku-archive.secretName" . | quote }}
{{- end }}
{{- end }}

{{/* The chart-wide extra environment (values extraEnv), to append to a container's env. */}}
{{- define "gomoku-archive.extraEnv" -}}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod-level settings every pod shares: no service-account token, the security context,
pull secrets. */}}
{{- define "gomoku-archive.podSpecCommon" -}}
automountServiceAccountToken: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* The writable scratch space of a read-only container. */}}
{{- define "gomoku-archive.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end }}

{{- define "gomoku-archive.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end }}

{{/* DOWNLOAD_CACHE_BYTES for an emptyDir size such as 4Gi: 90% of it, in bytes. */}}
{{- define "gomoku-archive.cacheBytes" -}}
{{- $units := dict "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- $unit := regexFind "(Mi|Gi|Ti)$" . -}}
{{- $number := trimSuffix $unit . | int64 -}}
{{- div (mul $number (get $units $unit) 9) 10 -}}
{{- end }}
