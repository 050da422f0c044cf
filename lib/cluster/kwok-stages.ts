// KWOK Stage definitions that make fake nodes Ready and move pods through their phases. Adapted from
// sigs.k8s.io/kwok v0.8.0 kustomize/stage/{node,pod}/fast (Apache-2.0), plus kubeloop's own stages:
// bare pods with restartPolicy Never/OnFailure complete, and pods annotated FAIL_ANNOTATION fail.

/** Annotate a pod `kwok.kubeloop.dev/fail: "true"` and it goes Running, then Failed (exit code 1). */
export const FAIL_ANNOTATION = 'kwok.kubeloop.dev/fail';
/** Optional delay before a pod completes or fails, e.g. "3s" (kwok's own annotation names). */
export const COMPLETE_DELAY_ANNOTATION = 'pod-complete.stage.kwok.x-k8s.io/delay';
export const FAIL_DELAY_ANNOTATION = 'pod-fail.stage.kwok.x-k8s.io/delay';

const nodeInitialize = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type  | Quote}}
      {{ end }}
      addresses:
      {{ with NodeIP }}
      - address: {{ . | Quote }}
        type: InternalIP
      {{ end }}
      {{ with NodeName }}
      - address: {{ . | Quote }}
        type: Hostname
      {{ end }}
      allocatable:
        cpu: 1k
        memory: 1Ti
        pods: 1M
      capacity:
        cpu: 1k
        memory: 1Ti
        pods: 1M
      {{ $kwokVersion := printf "kwok-%s" Version }}
      nodeInfo:
        architecture: amd64
        bootID: ""
        containerRuntimeVersion: {{ $kwokVersion }}
        kernelVersion: {{ $kwokVersion }}
        kubeProxyVersion: {{ $kwokVersion }}
        kubeletVersion: {{ $kwokVersion }}
        machineID: ""
        operatingSystem: linux
        osImage: ""
        systemUUID: ""
      phase: Running
`;

// kwok renews the node Leases itself (--node-lease-duration-seconds); the status heartbeat can be rare.
const nodeHeartbeat = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-heartbeat-with-lease
spec:
  resourceRef:
    apiGroup: v1
    kind: Node
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'In'
      values: ['True']
  delay:
    durationMilliseconds: 600000
    jitterDurationMilliseconds: 610000
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $lastTransitionTime := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
`;

const podReady = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Pending']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values: ['True']
  next:
    event:
      type: Normal
      reason: Started
      message: Started container (kwok)
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      {{ range .spec.readinessGates }}
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: {{ .conditionType | Quote }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        started: true
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      initContainerStatuses:
      {{ range .spec.initContainers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        restartCount: 0
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      {{ $hostIPs := NodeIPsWith .spec.nodeName }}
      {{ with $hostIPs }}
      hostIP: {{ index . 0 | Quote }}
      hostIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      {{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      {{ with $podIPs }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
`;

// The stock stage completes only Job-owned pods; Jobs require Never/OnFailure, so matching the
// restartPolicy covers Jobs and bare pods such as the At tutorial's.
const podComplete = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.spec.restartPolicy'
      operator: 'In'
      values: ['Never', 'OnFailure']
    - key: '.metadata.annotations["${FAIL_ANNOTATION}"]'
      operator: 'DoesNotExist'
  delay:
    durationMilliseconds: 500
    durationFrom:
      expressionFrom: '.metadata.annotations["${COMPLETE_DELAY_ANNOTATION}"]'
  next:
    event:
      type: Normal
      reason: Completed
      message: Container exited with code 0 (kwok)
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 0
            finishedAt: {{ $now | Quote }}
            reason: Completed
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Succeeded
`;

const podFail = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-fail
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.metadata.annotations["${FAIL_ANNOTATION}"]'
      operator: 'In'
      values: ['true']
  delay:
    durationMilliseconds: 500
    durationFrom:
      expressionFrom: '.metadata.annotations["${FAIL_DELAY_ANNOTATION}"]'
  next:
    event:
      type: Warning
      reason: Failed
      message: Container exited with code 1 (kwok, ${FAIL_ANNOTATION})
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodFailed
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodFailed
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        started: false
        state:
          terminated:
            exitCode: 1
            finishedAt: {{ $now | Quote }}
            reason: Error
            startedAt: {{ $now | Quote }}
      {{ end }}
      phase: Failed
`;

// Graceful deletion has no kubelet to confirm it: once no finalizer holds the pod, remove it.
const podDelete = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
    - key: '.metadata.finalizers'
      operator: 'DoesNotExist'
  next:
    delete: true
`;

/** All stages as one multi-document YAML for `kwok --config`. */
export function kwokStagesYaml(): string {
  return [nodeInitialize, nodeHeartbeat, podReady, podComplete, podFail, podDelete].map((s) => s.trim()).join('\n---\n') + '\n';
}
