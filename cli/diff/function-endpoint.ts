// A version of a function for `kubeloop diff`: a URL called as it is, or a module (or built-in name)
// served in-process on a loopback port, like `kubeloop replay --function`.
import { isAdmissionDefinition } from '../../lib/sdk/define-admission.ts';
import { formatSigningSecrets, type SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { serveForTest } from '../../lib/testing/serve.ts';
import { FunctionModuleError, loadFunctionByNameOrPath } from '../function-module.ts';
import { DiffError } from './loop-state.ts';

export interface FunctionEndpoint {
  url: string;
  close(): Promise<void>;
}

/** A version loaded and ready to serve: called with the Loop's keys (or none) it starts serving. */
export type FunctionVersion = (signingKeys?: SigningKeys) => Promise<FunctionEndpoint>;

/**
 * Loads a version: a URL is called as it is; a module is imported now (the slow part, before the cluster is
 * read) and served when called, with `signingKeys` (the Loop's signingSecretRef) checking requests and signing
 * replies as the deployed function does, so a signed Loop's calls verify. `side` names the flag in errors;
 * `admission` says which kind of function the diff needs.
 */
export async function loadVersion(moduleOrUrl: string, side: string, admission: boolean): Promise<FunctionVersion> {
  if (/^https?:\/\//.test(moduleOrUrl)) return async () => ({ url: moduleOrUrl, close: async () => {} });
  let definition;
  try {
    definition = await loadFunctionByNameOrPath(moduleOrUrl);
  } catch (error) {
    if (error instanceof FunctionModuleError) throw new DiffError(`${side}: ${error.message}`);
    throw error;
  }
  if (isAdmissionDefinition(definition) !== admission) {
    throw new DiffError(`${side}: ${moduleOrUrl} is ${admission ? 'a reconcile function; --hook needs an admission function' : 'an admission function; --loop needs a reconcile function'}`);
  }
  return async (signingKeys) => {
    const server = await serveForTest(definition, signingKeys && signingKeys.length > 0 ? { signingSecret: formatSigningSecrets(signingKeys) } : {});
    return { url: `${server.url}/`, close: () => server.close() };
  };
}
