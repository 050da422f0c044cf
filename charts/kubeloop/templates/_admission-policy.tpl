{{- /*
The parts the admission policies of Loops and AdmissionHooks share (CEL): the function URL rules the router
and the gateway re-check (lib/config/function-url-policy.ts) for the live function, its shadow and its canary,
and the ServiceAccount rules. Both policies name their URLs with "kubeloop.policy.urls" before these variables.
*/}}
{{- /* The variable "urls": [field, url] of the live function, its shadow and its canary, those given only. */}}
{{- define "kubeloop.policy.urls" }}
    - name: urls
      expression: >-
        [
          ['spec.function.url', has(object.spec.function) && has(object.spec.function.url) ? string(object.spec.function.url) : ''],
          ['spec.function.shadow.url', has(object.spec.function) && has(object.spec.function.shadow) && has(object.spec.function.shadow.url) ? string(object.spec.function.shadow.url) : ''],
          ['spec.function.canary.url', has(object.spec.function) && has(object.spec.function.canary) && has(object.spec.function.canary.url) ? string(object.spec.function.canary.url) : '']
        ].filter(p, p[1] != '')
{{- end }}
{{- define "kubeloop.policy.functionVariables" -}}
{{- $root := . }}
    # [field, url, host] of each URL given; host '' when the URL is not of the shape the router demands, so the
    # API server (Go) and the router (WHATWG) read the same host.
    - name: targets
      expression: {{ `variables.urls.map(p, [p[0], p[1], p[1].matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\\\\\\s]*)?$') && isURL(p[1]) ? url(p[1]).getHostname().lowerAscii() : ''])` | quote }}
    - name: allowedHosts
      expression: {{ include "kubeloop.allowedFunctionHosts" $root | quote }}
    - name: saNamespace
      # A namespaced Loop or AdmissionHook may omit it: its own namespace.
      expression: "has(object.spec.serviceAccount) && has(object.spec.serviceAccount.namespace) ? object.spec.serviceAccount.namespace : (has(object.metadata.namespace) ? object.metadata.namespace : '')"
    - name: saName
      expression: "has(object.spec.serviceAccount) ? object.spec.serviceAccount.name : ''"
{{- end }}

{{- define "kubeloop.policy.urlValidations" -}}
{{- $root := . }}
{{- $label := "[a-z0-9]([-a-z0-9]*[a-z0-9])?" }}
{{- $serviceHost := printf "^%s\\.%s\\.svc(\\.%s)?$" $label $label ($root.Values.clusterDomain | replace "." "\\.") }}
{{- $apiServer := list "kubernetes" "kubernetes.default" "kubernetes.default.svc" (printf "kubernetes.default.svc.%s" $root.Values.clusterDomain) }}
    - expression: "variables.targets.all(t, t[2] != '')"
      messageExpression: "variables.targets.filter(t, t[2] == '').map(t, t[0] + ' ' + t[1])[0] + ' must be http(s)://<host>[:port][/path] with a DNS host name (no user info, IPv6 literal or backslash)'"
      reason: Invalid
    # A host whose last label is a number is an IPv4 address to URL parsers (2130706433, 0x7f.1, 10.0.0.1).
    - expression: {{ `variables.targets.all(t, !t[2].matches('(^|\\.)(0x[0-9a-f]*|[0-9]+)$'))` | quote }}
      messageExpression: {{ `variables.targets.filter(t, t[2].matches('(^|\\.)(0x[0-9a-f]*|[0-9]+)$')).map(t, t[0] + ': host ' + t[2] + ' is an IP literal; name a cluster Service (<name>.<namespace>.svc)')[0]` | quote }}
      reason: Invalid
    - expression: "variables.targets.all(t, !(t[2] in ['localhost', 'localhost.localdomain']))"
      messageExpression: "variables.targets.filter(t, t[2] in ['localhost', 'localhost.localdomain']).map(t, t[0] + ': host ' + t[2] + ' is loopback')[0]"
      reason: Invalid
    - expression: >-
        variables.targets.all(t, !(t[2] in {{ toJson $apiServer }}))
      messageExpression: >-
        variables.targets.filter(t, t[2] in {{ toJson $apiServer }}).map(t, t[0] + ': host ' + t[2] + ' is the Kubernetes API server')[0]
      reason: Invalid
    - expression: >-
        variables.targets.all(t, t[2] == '' || t[2].matches({{ toJson $serviceHost }}) ||
          variables.allowedHosts.exists(p, p.startsWith('*.') ? (t[2].endsWith(p.substring(1)) && size(t[2]) > size(p) - 1) : t[2] == p))
      messageExpression: >-
        variables.targets.filter(t, !(t[2] == '' || t[2].matches({{ toJson $serviceHost }}) ||
          variables.allowedHosts.exists(p, p.startsWith('*.') ? (t[2].endsWith(p.substring(1)) && size(t[2]) > size(p) - 1) : t[2] == p)))
          .map(t, t[0] + ': host ' + t[2] + ' is not a cluster Service (<name>.<namespace>.svc or .svc.{{ $root.Values.clusterDomain }}) nor in loopAdmission.allowedHosts')[0]
      reason: Invalid
{{- end }}

{{- /* dict "kind" "Loop" "article" "a" "acts" "<what the ServiceAccount is for>" */}}
{{- define "kubeloop.policy.serviceAccountValidations" }}
    - expression: "variables.saNamespace != '' && variables.saName != ''"
      message: "spec.serviceAccount { namespace, name } is required: {{ .acts }}"
      reason: Invalid
    # Creating {{ .article }} {{ .kind }} lends it the ServiceAccount's rights: only someone who may use them directly may do so.
    # Any change of the spec (a new URL, other kinds, a key dropped) or of the labels (which router or gateway runs it)
    # re-lends them, so only an update that leaves both alone (metadata, finalizers) skips the check.
    - expression: >-
        variables.saName == '' ||
        (request.operation == 'UPDATE' && oldObject.spec == object.spec &&
          has(oldObject.metadata.labels) == has(object.metadata.labels) &&
          (!has(object.metadata.labels) || oldObject.metadata.labels == object.metadata.labels)) ||
        authorizer.group('').resource('serviceaccounts').namespace(variables.saNamespace).name(variables.saName).check('impersonate').allowed()
      messageExpression: "'spec.serviceAccount: ' + request.userInfo.username + ' may not impersonate ServiceAccount ' + variables.saNamespace + '/' + variables.saName + ', so may not create, change or relabel {{ .article }} {{ .kind }} that runs as it'"
      reason: Forbidden
{{- end }}

{{- /* Whether rule r's resource res reaches what no namespaced hook may match (webhooks/base/namespaced-hook-rules.ts). */}}
{{- define "kubeloop.policy.neverForNamespacedHooks" -}}
res.endsWith('/status') || res.endsWith('/*') || (r.apiGroups.exists(g, g in ['', '*']) && res in ['*', 'resourcequotas', 'limitranges', 'endpoints']) || (r.apiGroups.exists(g, g in ['discovery.k8s.io', '*']) && res in ['*', 'endpointslices'])
{{- end }}

{{- /* Whether the requester may update and patch every group and resource of rule r in the hook's namespace (wildcards skipped: refused on their own). */}}
{{- define "kubeloop.policy.mayWriteRule" -}}
r.apiGroups.all(g, r.resources.all(res, g.contains('*') || res.contains('*') || ['update', 'patch'].all(v, (res.contains('/') ? authorizer.group(g).resource(res.split('/')[0]).subresource(res.split('/')[1]) : authorizer.group(g).resource(res)).namespace(variables.own).check(v).allowed())))
{{- end }}

{{- /* Whether a Loop's function version (the expression given) calls a function and reads a signing Secret of its own namespace only. */}}
{{- define "kubeloop.policy.versionInOwnNamespace" -}}
(!has({{ . }}.ref) || !has({{ . }}.ref.namespace) || {{ . }}.ref.namespace == variables.own) && (!has({{ . }}.signingSecretRef) || !has({{ . }}.signingSecretRef.namespace) || {{ . }}.signingSecretRef.namespace == variables.own)
{{- end }}
