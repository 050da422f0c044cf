// Builds ReconcileRequests for the functions' unit tests: the package's testing helpers (lib/testing).
export { kubeObject, requestFor, variant, type RequestParts } from '../../lib/testing/requests.ts';
