// Where a hook's function (or its shadow or canary) is called: its URL, or its Service's cluster DNS name. Pure;
// the spec checks (hook-spec.ts) and the versions' checks (hook-versions-spec.ts) both stand on it.
import type { AdmissionHookSpec } from '../../api/admission-hook.ts';

/** The function's URL: given, or the Service's cluster DNS name (https on port 443, http otherwise). */
export function functionUrlOf(fn: Pick<AdmissionHookSpec['function'], 'url' | 'service'>): string | undefined {
  if (fn.url) return fn.url;
  if (!fn.service) return undefined;
  const port = fn.service.port ?? 80;
  const scheme = port === 443 ? 'https' : 'http';
  return `${scheme}://${fn.service.name}.${fn.service.namespace}.svc:${port}${fn.service.path ?? '/admit'}`;
}
