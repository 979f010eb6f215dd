{{/* The release's resources are named <release>-shopbot, or <release> when it already says shopbot. */}}
{{- define "shopbot.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "shopbot.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "shopbot.labels" -}}
{{ include "shopbot.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "shopbot.secretName" -}}
{{- .Values.existingSecret | default (include "shopbot.fullname" .) -}}
{{- end -}}

{{- define "shopbot.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "shopbot.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* The variable the Redis URL is given as, by redis.mode. */}}
{{- define "shopbot.redisVar" -}}
{{- $vars := dict "single" "REDIS_URL" "sentinel" "REDIS_SENTINEL_URL" "cluster" "REDIS_CLUSTER_URL" -}}
{{- $v := get $vars .Values.redis.mode -}}
{{- if not $v -}}
{{- fail (printf "redis.mode must be single, sentinel or cluster, not %q" .Values.redis.mode) -}}
{{- end -}}
{{- $v -}}
{{- end -}}

{{/* The URL Telegram posts updates to. */}}
{{- define "shopbot.webhookURL" -}}
{{- if .Values.webhook.url -}}
{{- .Values.webhook.url -}}
{{- else -}}
{{- if not .Values.ingress.host -}}
{{- fail "webhook mode needs ingress.host (or webhook.url)" -}}
{{- end -}}
{{- printf "https://%s%s" .Values.ingress.host .Values.webhook.path -}}
{{- end -}}
{{- end -}}

{{/* The environment the shop and `helm test`'s check share. */}}
{{- define "shopbot.env" -}}
{{- $secret := include "shopbot.secretName" . -}}
{{- range $name := list "TELEGRAM_TOKEN" "RESELLER_API_KEY" "WEBHOOK_SECRET" "REDIS_URL" "REDIS_SENTINEL_URL" "REDIS_CLUSTER_URL" "WEBHOOK_URL" "HTTP_ADDR" "METRICS_ADDR" "JOURNAL_DIR" }}
{{- if hasKey $.Values.config $name }}
{{- fail (printf "config.%s: the chart sets %s itself (secrets, webhook, ports and journal have values of their own)" $name $name) }}
{{- end }}
{{- end -}}
- name: TELEGRAM_TOKEN
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.secretKeys.telegramToken }}}
- name: RESELLER_API_KEY
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.secretKeys.resellerApiKey }}}
- name: {{ include "shopbot.redisVar" . }}
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.secretKeys.redisUrl }}}
{{- if eq .Values.mode "webhook" }}
- name: WEBHOOK_SECRET
  valueFrom:
    secretKeyRef: {name: {{ $secret }}, key: {{ .Values.secretKeys.webhookSecret }}}
- name: WEBHOOK_URL
  value: {{ include "shopbot.webhookURL" . | quote }}
{{- end }}
- name: HTTP_ADDR
  value: ":{{ .Values.service.port }}"
- name: METRICS_ADDR
  value: ":{{ .Values.metrics.port }}"
- name: JOURNAL_DIR
  value: /var/lib/shopbot/journal
{{- range $k, $v := .Values.config }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}
