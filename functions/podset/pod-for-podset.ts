// The pods a PodSet owns: the seed's newPodForCR, with the PodSet's own template when it has one.
import type { V1PodSpec } from '@kubernetes/client-node';
import { controllerReferenceTo, type KubeObject } from '../../lib/sdk/index.ts';
import { restrictedSecurityContext } from '../restricted-security-context.ts';
import type { PodSetConfig } from './config.ts';
import type { PodSet } from '../../api/podset.ts';

/** The seed labels its pods with the PodSet name and this version, and listed them by these labels. */
export const PODSET_POD_VERSION = 'v0.1';

/** The seed's container ("fancy-alpine", sleep 3600) on busybox, with its restricted securityContext. */
export function defaultPodSpec(config: PodSetConfig): V1PodSpec {
  return {
    containers: [
      {
        name: 'fancy-alpine',
        image: config.image,
        command: ['sleep', '3600'],
        securityContext: restrictedSecurityContext(),
      },
    ],
  };
}

export function podForPodSet(podset: PodSet, config: PodSetConfig): KubeObject {
  const name = podset.metadata?.name ?? '';
  const template = podset.spec?.template;
  const annotations = template?.metadata?.annotations;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      // The seed wrote cr.Name + "-pod", which gave names like "podset-sample-podx7k2q".
      generateName: `${name}-pod-`,
      namespace: podset.metadata?.namespace,
      labels: { ...template?.metadata?.labels, app: name, version: PODSET_POD_VERSION },
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
      ownerReferences: [controllerReferenceTo(podset)],
    },
    spec: template?.spec ?? defaultPodSpec(config),
  };
}
