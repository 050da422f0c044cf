// A recorded-like watch stream of pod events (what the router's pod informer reads during bench:router's live
// item): ADDED, scheduled, running, labelled, with the managedFields a real API server writes, cut into chunks
// the way a socket delivers them. Pure: bytes in memory, no cluster.

/** One pod as the API server sends it at a step of its life (0 created .. 3 labelled by the function). */
export function recordedPod(index: number, step: number, resourceVersion: number): object {
  const name = `bench-${index.toString(36).padStart(5, '0')}-x7k2p`;
  const time = '2026-11-28T10:00:00Z';
  const fieldsV1 = { 'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"6f1c9a56-0d0e-4f4b-9d39-5d1cbf0f6a11"}': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': {}, 'f:terminationMessagePath': {}, 'f:terminationMessagePolicy': {} } }, 'f:dnsPolicy': {}, 'f:enableServiceLinks': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:securityContext': {}, 'f:terminationGracePeriodSeconds': {} } };
  const managedFields: object[] = [{ manager: 'kube-controller-manager', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1 }];
  if (step >= 2) {
    managedFields.push({ manager: 'kubelet', operation: 'Update', apiVersion: 'v1', time, fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"ContainersReady"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }, 'k:{"type":"Initialized"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} }, 'k:{"type":"Ready"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } }, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:phase': {}, 'f:podIP': {}, 'f:podIPs': { '.': {}, 'k:{"ip":"10.0.0.1"}': { '.': {}, 'f:ip': {} } }, 'f:startTime': {} } } });
  }
  if (step >= 3) managedFields.push({ manager: 'kubeloop', operation: 'Apply', apiVersion: 'v1', time, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:pod-name': {} } } } });
  const labels: Record<string, string> = { app: 'bench', 'pod-template-hash': '5d8f7c9b4' };
  if (step >= 3) labels['pod-name'] = name;
  const status =
    step === 0
      ? { phase: 'Pending', qosClass: 'BestEffort' }
      : {
          phase: step >= 2 ? 'Running' : 'Pending',
          conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: step >= 2 || type === 'PodScheduled' ? 'True' : 'False', lastProbeTime: null, lastTransitionTime: time })),
          hostIP: '10.0.0.1',
          podIP: step >= 2 ? `10.244.${index % 250}.${index % 200}` : undefined,
          startTime: time,
          containerStatuses: step >= 2 ? [{ name: 'app', ready: true, restartCount: 0, image: 'registry.k8s.io/pause:3.10', imageID: '', containerID: `containerd://${'ab'.repeat(32)}`, started: true, state: { running: { startedAt: time } } }] : undefined,
          qosClass: 'BestEffort',
        };
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      generateName: 'bench-5d8f7c9b4-',
      namespace: 'bench',
      uid: `0c5b${index.toString(16).padStart(4, '0')}-1f2e-4d3c-8b7a-6e5f4d3c2b1a`,
      resourceVersion: String(resourceVersion),
      creationTimestamp: time,
      labels,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'bench-5d8f7c9b4', uid: '6f1c9a56-0d0e-4f4b-9d39-5d1cbf0f6a11', controller: true, blockOwnerDeletion: true }],
      managedFields,
    },
    spec: {
      volumes: [{ name: 'kube-api-access-x7k2p', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }], defaultMode: 420 } }],
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: {}, volumeMounts: [{ name: 'kube-api-access-x7k2p', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }], terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      serviceAccount: 'default',
      nodeName: step >= 1 ? 'kwok-node-0' : undefined,
      securityContext: {},
      schedulerName: 'default-scheduler',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status,
  };
}

/**
 * `events` watch lines (a bookmark every 100), each pod walked through its steps; `metadataOnly`: as a
 * metadata-only watch sends them (PartialObjectMetadata), what a Loop like pod-name-label reads.
 */
export function recordedPodWatch(events: number, metadataOnly = false): { lines: string[]; objectEvents: number } {
  const lines: string[] = [];
  let resourceVersion = 1000;
  let objectEvents = 0;
  const steps = 4;
  for (let n = 0; lines.length < events; n++) {
    const pod = Math.floor(n / steps);
    const step = n % steps;
    const object = recordedPod(pod, step, ++resourceVersion) as { metadata: object };
    const sent = metadataOnly ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata } : object;
    lines.push(JSON.stringify({ type: step === 0 ? 'ADDED' : 'MODIFIED', object: sent }));
    objectEvents += 1;
    if (lines.length % 100 === 99) lines.push(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(resourceVersion), annotations: { 'k8s.io/initial-events-end': 'false' } } } }));
  }
  return { lines, objectEvents };
}

/** The stream's bytes as a socket hands them over: one event per chunk (a trickle) or `size`-byte chunks (a burst). */
export function chunked(lines: readonly string[], size: number | 'per-event'): Buffer[] {
  if (size === 'per-event') return lines.map((line) => Buffer.from(`${line}\n`));
  return chunkBytes(Buffer.from(lines.map((line) => `${line}\n`).join('')), size);
}

/** Bytes cut into `size`-byte chunks, as a socket delivers a burst. */
export function chunkBytes(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}
