// The pod that runs an At's command: the seed's spawn.NewPodForCR, with the command run by a shell.
import { controllerReferenceTo, type KubeObject } from '../../lib/sdk/index.ts';
import { restrictedSecurityContext } from '../restricted-security-context.ts';
import type { AtConfig } from './config.ts';
import type { At } from '../../api/at.ts';

const MAX_LABEL_VALUE_LENGTH = 63;

/** Named after the At, so a replayed create hits AlreadyExists instead of running the command twice. */
export function podNameOf(at: At): string {
  return at.metadata?.name ?? '';
}

export function podForAt(at: At, config: AtConfig): KubeObject {
  const name = podNameOf(at);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: at.metadata?.namespace,
      // The seed's label; a name longer than a label value allows (the CRD refuses those) goes without it.
      ...(name.length <= MAX_LABEL_VALUE_LENGTH ? { labels: { app: name } } : {}),
      ownerReferences: [controllerReferenceTo(at)],
    },
    spec: {
      containers: [
        {
          name: 'busybox',
          image: at.spec?.image || config.image,
          // The seed split the command on spaces, which broke quoting and anything but a plain argv.
          command: ['sh', '-c', at.spec?.command ?? ''],
          securityContext: restrictedSecurityContext(),
        },
      ],
      restartPolicy: 'OnFailure',
    },
  };
}
