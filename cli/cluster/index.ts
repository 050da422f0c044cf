// Public surface of the local control plane: binaries, the harness, and the kwok pod-fate annotations.
export { ensureBinaries, type ClusterBinaries, type EnsureBinariesOptions } from './binaries.ts';
export { startControlPlane, type ControlPlane, type StartControlPlaneOptions } from './control-plane.ts';
export { COMPLETE_DELAY_ANNOTATION, FAIL_ANNOTATION, FAIL_DELAY_ANNOTATION } from './kwok-stages.ts';
export { createCertificateAuthority, issueCertificate, type CertKeyPem } from './pki.ts';
export { KUBERNETES_RELEASES, VERSIONS, cacheRoot } from './versions.ts';
export { pidAlive } from './pid-alive.ts';
