// The container securityContext the seeds' "limit container permissions" step asks for, completed so it
// passes the Pod Security "restricted" profile with an image that runs as root by default (busybox).
import type { V1SecurityContext } from '@kubernetes/client-node';

/** The "nobody" user: runAsNonRoot alone makes kubelet refuse an image whose user is root. */
export const NON_ROOT_USER = 65534;

export function restrictedSecurityContext(): V1SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    runAsNonRoot: true,
    runAsUser: NON_ROOT_USER,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
