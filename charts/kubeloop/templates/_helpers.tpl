{{/* Names, labels, images and security settings shared by every kubeloop template. */}}

{{- define "kubeloop.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* fullnameOverride, else <release>-<name>, or the release name alone when it already contains the name.
Truncated to 40 characters: objects append suffixes (-router-leader, -loop-<function>) to it. */}}
{{- define "kubeloop.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "kubeloop.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubeloop.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of one component; call with (dict "root" $ "component" "router"). */}}
{{- define "kubeloop.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubeloop.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "kubeloop.labels" -}}
{{ include "kubeloop.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: kubeloop
helm.sh/chart: {{ include "kubeloop.chart" .root }}
{{- end -}}

{{/* Image reference; call with (dict "root" $ "repository" "router"). */}}
{{- define "kubeloop.image" -}}
{{- $tag := .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- printf "%s/%s:%s" .root.Values.image.registry .repository $tag -}}
{{- end -}}

{{/* The restricted Pod Security profile, per container. */}}
{{- define "kubeloop.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .Values.podSecurityContext.runAsUser }}
runAsGroup: {{ .Values.podSecurityContext.runAsGroup }}
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "kubeloop.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets -}}
imagePullSecrets:
{{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{- define "kubeloop.routerName" -}}{{ include "kubeloop.fullname" . }}-router{{- end -}}
{{- define "kubeloop.webhookName" -}}{{ include "kubeloop.fullname" . }}-webhook{{- end -}}
{{- define "kubeloop.functionServiceAccount" -}}{{ include "kubeloop.fullname" . }}-function{{- end -}}
{{- define "kubeloop.webhookSecret" -}}{{ include "kubeloop.fullname" . }}-webhook-tls{{- end -}}
{{/* The ServiceAccount the router acts as for one Loop; call with (dict "root" $ "name" "podset"). */}}
{{- define "kubeloop.loopServiceAccount" -}}
{{- printf "%s-loop-%s" (include "kubeloop.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "kubeloop.hookConfigurationName" -}}{{ include "kubeloop.fullname" . }}-admission-hooks{{- end -}}
{{- define "kubeloop.leaseName" -}}{{ include "kubeloop.fullname" . }}-router-leader{{- end -}}
{{/* The group of the sharded routers' member Leases (a label value, so at most 63 characters). */}}
{{- define "kubeloop.shardGroup" -}}{{ include "kubeloop.fullname" . | trunc 56 | trimSuffix "-" }}-router{{- end -}}

{{/* One function's settings: functionDefaults overlaid with its own entry; call with (dict "root" $ "name" "podset"). */}}
{{- define "kubeloop.functionConfig" -}}
{{- $own := index .root.Values.functions .name -}}
{{- toYaml (mergeOverwrite (deepCopy .root.Values.functionDefaults) (deepCopy $own)) -}}
{{- end -}}

{{/* Name of a function's Service or Knative Service (Knative appends -00001 to revisions: keep room). */}}
{{- define "kubeloop.functionName" -}}
{{- printf "%s-%s" (include "kubeloop.fullname" .root) .name | trunc 56 | trimSuffix "-" -}}
{{- end -}}

{{/* "true" when a function is rendered at all: enabled (the default), and not a seed while seeds are off. */}}
{{- define "kubeloop.functionActive" -}}
{{- $own := index .root.Values.functions .name -}}
{{- if and (ne (toString (index $own "enabled")) "false") (or (not (index $own "seed")) .root.Values.seeds.enabled) -}}true{{- end -}}
{{- end -}}

{{/* A function's image: its own registry/repository/tag/digest, registry and tag defaulting to the chart's. */}}
{{- define "kubeloop.functionImage" -}}
{{- $image := .fn.image | default dict -}}
{{- $ref := printf "%s/%s" ($image.registry | default .root.Values.image.registry) $image.repository -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $ref $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref (toString ($image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion)) -}}
{{- end -}}
{{- end -}}

{{/* loopAdmission.allowedHosts plus the host of every active function's own url (the values that name a
function elsewhere also allow it), as a JSON list. */}}
{{- define "kubeloop.allowedFunctionHosts" -}}
{{- $hosts := .Values.loopAdmission.allowedHosts | default list -}}
{{- range $name := keys .Values.functions | sortAlpha -}}
{{- $fn := include "kubeloop.functionConfig" (dict "root" $ "name" $name) | fromYaml -}}
{{- if and (include "kubeloop.functionActive" (dict "root" $ "name" $name)) $fn.url -}}
{{- $hosts = append $hosts (urlParse $fn.url).hostname -}}
{{- end -}}
{{- end -}}
{{- toJson ($hosts | uniq) -}}
{{- end -}}

{{/* The URL the Loop's router calls: the function's own url, the Service's port, or Knative's cluster-local address on port 80. */}}
{{- define "kubeloop.functionURL" -}}
{{- $fn := include "kubeloop.functionConfig" . | fromYaml -}}
{{- $name := include "kubeloop.functionName" . -}}
{{- if $fn.url -}}
{{- $fn.url -}}
{{- else if eq $fn.runtime "knative" -}}
{{- printf "http://%s.%s.svc.%s%s" $name .root.Release.Namespace .root.Values.clusterDomain $fn.path -}}
{{- else -}}
{{- printf "http://%s.%s.svc:%v%s" $name .root.Release.Namespace $fn.port $fn.path -}}
{{- end -}}
{{- end -}}

{{/* API group of an apiVersion ("apps/v1" -> "apps", "v1" -> ""). */}}
{{- define "kubeloop.apiGroup" -}}
{{- if contains "/" . -}}{{- first (splitList "/" .) -}}{{- end -}}
{{- end -}}

{{/* Plural resource of a kind; call with (dict "root" $ "kind" "PodSet"). */}}
{{- define "kubeloop.plural" -}}
{{- $override := index .root.Values.router.rbac.plurals .kind -}}
{{- if $override -}}{{- $override -}}
{{- else -}}
{{- $lower := lower .kind -}}
{{- if or (hasSuffix "s" $lower) (hasSuffix "x" $lower) (hasSuffix "ch" $lower) (hasSuffix "sh" $lower) -}}{{ $lower }}es
{{- else if and (hasSuffix "y" $lower) (not (regexMatch "[aeiou]y$" $lower)) -}}{{ trimSuffix "y" $lower }}ies
{{- else -}}{{ $lower }}s
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubeloop.tmpVolume" -}}
- name: tmp
  emptyDir:
    medium: Memory
    sizeLimit: 16Mi
{{- end -}}

{{/* A function's signing key as JSON {"name","key","generate"}, or "" when its calls are not signed: the
function's own signingSecret (an existing Secret in the release namespace), else, when signing.enabled,
a Secret the chart generates for a function it runs, reconcile or admission (never for a url function: its
key lives elsewhere).
Call with (dict "root" $ "name" "podset"). */}}
{{- define "kubeloop.signingSecret" -}}
{{- $fn := include "kubeloop.functionConfig" . | fromYaml -}}
{{- $own := $fn.signingSecret | default dict -}}
{{- if $own.name -}}
{{- toJson (dict "name" $own.name "key" ($own.key | default "secret") "generate" false) -}}
{{- else if and .root.Values.signing.enabled (not $fn.url) -}}
{{- $name := printf "%s-%s-signing" (include "kubeloop.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- toJson (dict "name" $name "key" "secret" "generate" true) -}}
{{- end -}}
{{- end -}}

{{/* "true" when the router may watch Knative Services (function.ref): router.rbac.knativeServices, or any active function on the knative runtime. */}}
{{- define "kubeloop.knativeRefs" -}}
{{- $on := .Values.router.rbac.knativeServices -}}
{{- range $name := keys .Values.functions -}}
{{- $fn := include "kubeloop.functionConfig" (dict "root" $ "name" $name) | fromYaml -}}
{{- if and (include "kubeloop.functionActive" (dict "root" $ "name" $name)) (eq $fn.runtime "knative") -}}{{- $on = true -}}{{- end -}}
{{- end -}}
{{- if $on -}}true{{- end -}}
{{- end -}}

{{/* The ServiceAccount a component runs as: serviceAccount.name, else the component's name when the chart
creates it, else "default". Call with (dict "root" $ "component" "router"). */}}
{{- define "kubeloop.serviceAccountName" -}}
{{- $sa := (index .root.Values .component).serviceAccount | default dict -}}
{{- if $sa.name -}}{{- $sa.name -}}
{{- else if ne (toString $sa.create) "false" -}}{{- printf "%s-%s" (include "kubeloop.fullname" .root) .component -}}
{{- else -}}default
{{- end -}}
{{- end -}}

{{/* --hook-exclude-identities: webhook.namespacedHooks.excludeIdentities, plus the router's and the gateway's
ServiceAccounts (their workers serve every namespace), comma-separated; empty when the list is empty. */}}
{{- define "kubeloop.excludedHookIdentities" -}}
{{- $ids := .Values.webhook.namespacedHooks.excludeIdentities | default list -}}
{{- if $ids -}}
{{- $own := list -}}
{{- range $component := list "router" "webhook" -}}
{{- $own = append $own (printf "system:serviceaccount:%s:%s" $.Release.Namespace (include "kubeloop.serviceAccountName" (dict "root" $ "component" $component))) -}}
{{- end -}}
{{- join "," (concat $ids $own) -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount object of a component when serviceAccount.create (the default); call like kubeloop.serviceAccountName. */}}
{{- define "kubeloop.serviceAccount" -}}
{{- $sa := (index .root.Values .component).serviceAccount | default dict -}}
{{- if ne (toString $sa.create) "false" }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "kubeloop.serviceAccountName" . }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "kubeloop.labels" . | nindent 4 }}
  {{- with $sa.annotations }}
  annotations: {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: true
---
{{- end }}
{{- end -}}

{{/* priorityClassName and topologySpreadConstraints of a component's pods (the constraints' labelSelector
defaults to the component's pods); call with (dict "root" $ "component" "router"). */}}
{{- define "kubeloop.podScheduling" -}}
{{- $values := index .root.Values .component -}}
{{- with $values.priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- with $values.topologySpreadConstraints }}
topologySpreadConstraints:
{{- range . }}
  - {{- toYaml (merge (dict) . (dict "labelSelector" (dict "matchLabels" (include "kubeloop.selectorLabels" $ | fromYaml)))) | nindent 4 }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Labels and annotations every CRD of the chart gets (templates/crds.yaml). */}}
{{- define "kubeloop.crdMetadata" -}}
labels:
  {{- include "kubeloop.labels" (dict "root" . "component" "crd") | nindent 2 }}
{{- if .Values.crds.keep }}
annotations:
  helm.sh/resource-policy: keep
{{- end }}
{{- end -}}

{{/*
webhook.apiServerAuthentication.mode none leaves the admission port to the NetworkPolicy alone: refuse to
render unless it is on and names the API server's addresses (docs/security.md, "Who may call the gateway").
*/}}
{{- define "kubeloop.webhookAuthenticationCheck" -}}
{{- $auth := .Values.webhook.apiServerAuthentication -}}
{{- if eq $auth.mode "none" -}}
{{- $np := .Values.networkPolicy -}}
{{- if or (not $np.enabled) (empty $np.apiServerCIDRs) (has "0.0.0.0/0" $np.apiServerCIDRs) (has "::/0" $np.apiServerCIDRs) -}}
{{- fail "webhook.apiServerAuthentication.mode=none: without the API server's client certificate only the NetworkPolicy keeps other pods from posting AdmissionReviews; set networkPolicy.enabled=true and networkPolicy.apiServerCIDRs to your API server's addresses (see docs/security.md)" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Egress rules of the router and the webhook: DNS, the API server (networkPolicy.apiServerCIDRs on
networkPolicy.egress.apiServerPorts; 0.0.0.0/0 leaves out link-local, where cloud metadata answers) and any
pod of the cluster (functions and AdmissionHook functions live in any namespace; node and external
addresses are not pods), plus networkPolicy.egress.extraRules.
*/}}
{{- define "kubeloop.controlPlaneEgress" -}}
{{- $np := .Values.networkPolicy -}}
# DNS, wherever the resolver is (kube-dns pods or a node-local cache).
- ports:
    - { port: 53, protocol: UDP }
    - { port: 53, protocol: TCP }
# The API server (after the kubernetes Service's address translation: its endpoints).
- ports:
    {{- range $np.egress.apiServerPorts }}
    - { port: {{ . }}, protocol: TCP }
    {{- end }}
  to:
    {{- range $np.apiServerCIDRs }}
    {{- if eq . "0.0.0.0/0" }}
    - ipBlock: { cidr: 0.0.0.0/0, except: [169.254.0.0/16] }
    {{- else }}
    - ipBlock: { cidr: {{ . | quote }} }
    {{- end }}
    {{- end }}
# Functions: pods of any namespace.
- to:
    - namespaceSelector: {}
{{- with $np.egress.extraRules }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* OTLP export settings of every kubeloop container (lib/server/server-settings.ts reads them); none when tracing.endpoint is empty. */}}
{{- define "kubeloop.tracingEnv" -}}
{{- with .Values.tracing }}{{ if .endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .endpoint | quote }}
- name: KUBELOOP_TRACE_SAMPLING_RATIO
  value: {{ .samplingRatio | quote }}
{{- if .headersSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom: { secretKeyRef: { name: {{ .headersSecret | quote }}, key: headers } }
{{- else if .headers }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  value: {{ include "kubeloop.otlpHeaders" .headers | quote }}
{{- end }}
{{- end }}{{ end }}
{{- end -}}

{{- define "kubeloop.otlpHeaders" -}}
{{- $pairs := list }}{{ range $k, $v := . }}{{ $pairs = append $pairs (printf "%s=%s" $k (urlquery $v | replace "+" "%20")) }}{{ end }}{{ join "," $pairs }}
{{- end -}}
