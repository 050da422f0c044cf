// KWOK Stage definitions that make fake nodes Ready and move pods through their phases. Adapted from
// sigs.k8s.io/kwok v0.8.0 kustomize/stage/{node,pod}/fast (Apache-2.0), plus kubeloop's own stages:
// bare pods with restartPolicy Never/OnFailure complete, and pods annotated FAIL_ANNOTATION fail.
import { stringify } from 'yaml';

/** Annotate a pod `kwok.kubeloop.dev/fail: "true"` and it goes Running, then Failed (exit code 1). */
export const FAIL_ANNOTATION = 'kwok.kubeloop.dev/fail';
/** Optional delay before a pod completes or fails, e.g. "3s" (kwok's own annotation names). */
export const COMPLETE_DELAY_ANNOTATION = 'pod-complete.stage.kwok.x-k8s.io/delay';
export const FAIL_DELAY_ANNOTATION = 'pod-fail.stage.kwok.x-k8s.io/delay';

interface MatchExpression {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

interface StageDelay {
  durationMilliseconds: number;
  jitterDurationMilliseconds?: number;
  durationFrom?: { expressionFrom: string };
}

interface StageNext {
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string };
  /** A Go template kwok renders into the object's status. */
  statusTemplate?: string;
  delete?: boolean;
}

interface StageSpec {
  name: string;
  kind: 'Node' | 'Pod';
  match: MatchExpression[];
  delay?: StageDelay;
  next: StageNext;
}

function stage({ name, kind, match, delay, next }: StageSpec): object {
  return {
    apiVersion: 'kwok.x-k8s.io/v1alpha1',
    kind: 'Stage',
    metadata: { name },
    spec: { resourceRef: { apiGroup: 'v1', kind }, selector: { matchExpressions: match }, ...(delay ? { delay } : {}), next },
  };
}

const readyStatus = '.status.conditions.[] | select( .type == "Ready" ) | .status';
const notDeleting: MatchExpression = { key: '.metadata.deletionTimestamp', operator: 'DoesNotExist' };
const phaseIs = (phase: string): MatchExpression => ({ key: '.status.phase', operator: 'In', values: [phase] });
const failAnnotation = `.metadata.annotations["${FAIL_ANNOTATION}"]`;

/** Template lines joined, so each reads as it renders (YAML indentation included). */
const template = (...lines: string[]): string => lines.map((l) => `${l}\n`).join('');

const nodeConditions = template(
  '{{ $now := Now }}',
  '{{ $lastTransitionTime := or .metadata.creationTimestamp $now }}',
  'conditions:',
  '{{ range NodeConditions }}',
  '- lastHeartbeatTime: {{ $now | Quote }}',
  '  lastTransitionTime: {{ $lastTransitionTime | Quote }}',
  '  message: {{ .message | Quote }}',
  '  reason: {{ .reason | Quote }}',
  '  status: {{ .status | Quote }}',
  '  type: {{ .type | Quote }}',
  '{{ end }}',
);

const nodeInitialize = stage({
  name: 'node-initialize',
  kind: 'Node',
  match: [{ key: readyStatus, operator: 'NotIn', values: ['True'] }],
  next: {
    statusTemplate:
      nodeConditions +
      template(
        'addresses:',
        '{{ with NodeIP }}',
        '- address: {{ . | Quote }}',
        '  type: InternalIP',
        '{{ end }}',
        '{{ with NodeName }}',
        '- address: {{ . | Quote }}',
        '  type: Hostname',
        '{{ end }}',
        ...['allocatable', 'capacity'].flatMap((field) => [`${field}:`, '  cpu: 1k', '  memory: 1Ti', '  pods: 1M']),
        '{{ $kwokVersion := printf "kwok-%s" Version }}',
        'nodeInfo:',
        '  architecture: amd64',
        '  bootID: ""',
        ...['containerRuntimeVersion', 'kernelVersion', 'kubeProxyVersion', 'kubeletVersion'].map((field) => `  ${field}: {{ $kwokVersion }}`),
        '  machineID: ""',
        '  operatingSystem: linux',
        '  osImage: ""',
        '  systemUUID: ""',
        'phase: Running',
      ),
  },
});

// kwok renews the node Leases itself (--node-lease-duration-seconds); the status heartbeat can be rare.
const nodeHeartbeat = stage({
  name: 'node-heartbeat-with-lease',
  kind: 'Node',
  match: [phaseIs('Running'), { key: readyStatus, operator: 'In', values: ['True'] }],
  delay: { durationMilliseconds: 600000, jitterDurationMilliseconds: 610000 },
  next: { statusTemplate: nodeConditions },
});

/** A pod condition as the template writes it, with `status` already quoted. */
const podCondition = (type: string, status: string, reason?: string): string[] => [
  '- lastTransitionTime: {{ $now | Quote }}',
  `  status: ${status}`,
  ...(reason ? [`  reason: ${reason}`] : []),
  `  type: ${type}`,
];

/** One status entry per container of `list`, ending in `state` (YAML lines below the entry). */
const containerStatuses = (field: string, list: string, ready: boolean, started: boolean | undefined, state: string[]): string[] => [
  `${field}:`,
  `{{ range .spec.${list} }}`,
  '- image: {{ .image | Quote }}',
  '  name: {{ .name | Quote }}',
  `  ready: ${ready}`,
  '  restartCount: 0',
  ...(started === undefined ? [] : [`  started: ${started}`]),
  '  state:',
  ...state.map((l) => `    ${l}`),
  '{{ end }}',
];

const terminated = (exitCode: number, reason: string): string[] => [
  'terminated:',
  `  exitCode: ${exitCode}`,
  '  finishedAt: {{ $now | Quote }}',
  `  reason: ${reason}`,
  '  startedAt: {{ $now | Quote }}',
];

/** The node's or the pod's IPs as `<field>IP` and `<field>IPs`, when kwok has any. */
const ipFields = (variable: string, expression: string, field: string): string[] => [
  `{{ ${variable} := ${expression} }}`,
  `{{ with ${variable} }}`,
  `${field}IP: {{ index . 0 | Quote }}`,
  `${field}IPs:`,
  '{{ range . }}',
  '- ip: {{ . | Quote }}',
  '{{ end }}',
  '{{ end }}',
];

const podReady = stage({
  name: 'pod-ready',
  kind: 'Pod',
  match: [notDeleting, phaseIs('Pending'), { key: readyStatus, operator: 'NotIn', values: ['True'] }],
  next: {
    event: { type: 'Normal', reason: 'Started', message: 'Started container (kwok)' },
    statusTemplate: template(
      '{{ $now := Now }}',
      'conditions:',
      ...['Initialized', 'Ready', 'ContainersReady'].flatMap((type) => podCondition(type, '"True"')),
      '{{ range .spec.readinessGates }}',
      ...podCondition('{{ .conditionType | Quote }}', '"True"'),
      '{{ end }}',
      ...containerStatuses('containerStatuses', 'containers', true, true, ['running:', '  startedAt: {{ $now | Quote }}']),
      ...containerStatuses('initContainerStatuses', 'initContainers', true, undefined, terminated(0, 'Completed')),
      ...ipFields('$hostIPs', 'NodeIPsWith .spec.nodeName', 'host'),
      ...ipFields(
        '$podIPs',
        'PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" )',
        'pod',
      ),
      'phase: Running',
      'startTime: {{ $now | Quote }}',
    ),
  },
});

interface PodEnd {
  name: string;
  match: MatchExpression[];
  delayAnnotation: string;
  event: NonNullable<StageNext['event']>;
  /** PodCompleted or PodFailed: the reason on the Ready conditions. */
  conditionReason: string;
  exitCode: number;
  terminatedReason: string;
  phase: 'Succeeded' | 'Failed';
}

/** A running pod's containers all exit (after 500 ms or the delay annotation) and the pod ends. */
const podEnd = (end: PodEnd): object =>
  stage({
    name: end.name,
    kind: 'Pod',
    match: [notDeleting, phaseIs('Running'), ...end.match],
    delay: { durationMilliseconds: 500, durationFrom: { expressionFrom: `.metadata.annotations["${end.delayAnnotation}"]` } },
    next: {
      event: end.event,
      statusTemplate: template(
        '{{ $now := Now }}',
        'conditions:',
        ...['Ready', 'ContainersReady'].flatMap((type) => podCondition(type, '"False"', end.conditionReason)),
        ...containerStatuses('containerStatuses', 'containers', false, false, terminated(end.exitCode, end.terminatedReason)),
        `phase: ${end.phase}`,
      ),
    },
  });

// The stock stage completes only Job-owned pods; Jobs require Never/OnFailure, so matching the
// restartPolicy covers Jobs and bare pods such as the At tutorial's.
const podComplete = podEnd({
  name: 'pod-complete',
  match: [
    { key: '.spec.restartPolicy', operator: 'In', values: ['Never', 'OnFailure'] },
    { key: failAnnotation, operator: 'DoesNotExist' },
  ],
  delayAnnotation: COMPLETE_DELAY_ANNOTATION,
  event: { type: 'Normal', reason: 'Completed', message: 'Container exited with code 0 (kwok)' },
  conditionReason: 'PodCompleted',
  exitCode: 0,
  terminatedReason: 'Completed',
  phase: 'Succeeded',
});

const podFail = podEnd({
  name: 'pod-fail',
  match: [{ key: failAnnotation, operator: 'In', values: ['true'] }],
  delayAnnotation: FAIL_DELAY_ANNOTATION,
  event: { type: 'Warning', reason: 'Failed', message: `Container exited with code 1 (kwok, ${FAIL_ANNOTATION})` },
  conditionReason: 'PodFailed',
  exitCode: 1,
  terminatedReason: 'Error',
  phase: 'Failed',
});

// Graceful deletion has no kubelet to confirm it: once no finalizer holds the pod, remove it.
const podDelete = stage({
  name: 'pod-delete',
  kind: 'Pod',
  match: [
    { key: '.metadata.deletionTimestamp', operator: 'Exists' },
    { key: '.metadata.finalizers', operator: 'DoesNotExist' },
  ],
  next: { delete: true },
});

/** All stages as one multi-document YAML for `kwok --config`. */
export function kwokStagesYaml(): string {
  return [nodeInitialize, nodeHeartbeat, podReady, podComplete, podFail, podDelete].map((s) => stringify(s, { lineWidth: 0 }).trim()).join('\n---\n') + '\n';
}
