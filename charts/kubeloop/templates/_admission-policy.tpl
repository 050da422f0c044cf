{{- /*
The parts the admission policies of Loops and AdmissionHooks share (CEL): the function URL rules the router
and the gateway re-check (lib/config/function-url-policy.ts) and the ServiceAccount rules. Both expect a
variable "url" (empty: no URL to check) defined before these variables.
*/}}
{{- define "kubeloop.policy.functionVariables" -}}
{{- $root := . }}
    # The same shape the router demands, so the API server (Go) and the router (WHATWG) read the same host.
    - name: shaped
      expression: {{ `variables.url.matches('^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[^\\\\\\s]*)?$')` | quote }}
    - name: host
      expression: "variables.shaped && isURL(variables.url) ? url(variables.url).getHostname().lowerAscii() : ''"
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
    - expression: "variables.url == '' || (variables.shaped && variables.host != '')"
      messageExpression: "'spec.function.url ' + variables.url + ' must be http(s)://<host>[:port][/path] with a DNS host name (no user info, IPv6 literal or backslash)'"
      reason: Invalid
    # A host whose last label is a number is an IPv4 address to URL parsers (2130706433, 0x7f.1, 10.0.0.1).
    - expression: {{ `variables.host == '' || !variables.host.matches('(^|\\.)(0x[0-9a-f]*|[0-9]+)$')` | quote }}
      messageExpression: "'spec.function.url: host ' + variables.host + ' is an IP literal; name a cluster Service (<name>.<namespace>.svc)'"
      reason: Invalid
    - expression: "!(variables.host in ['localhost', 'localhost.localdomain'])"
      messageExpression: "'spec.function.url: host ' + variables.host + ' is loopback'"
      reason: Invalid
    - expression: >-
        !(variables.host in {{ toJson $apiServer }})
      messageExpression: "'spec.function.url: host ' + variables.host + ' is the Kubernetes API server'"
      reason: Invalid
    - expression: >-
        variables.host == '' || variables.host.matches({{ toJson $serviceHost }}) ||
        variables.allowedHosts.exists(p, p.startsWith('*.') ? (variables.host.endsWith(p.substring(1)) && size(variables.host) > size(p) - 1) : variables.host == p)
      messageExpression: "'spec.function.url: host ' + variables.host + ' is not a cluster Service (<name>.<namespace>.svc or .svc.{{ $root.Values.clusterDomain }}) nor in loopAdmission.allowedHosts'"
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
