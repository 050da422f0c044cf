// Connections opened ahead of need as a Loop starts (docs/router.md, "Connections opened ahead of need"): the write
// session, and the function's, so the first call does not connect while the primaries' list is being read. At
// start, not at the first primary: the first call often leaves in the very turn its list brings the first primary.
import type { KubeObject } from '../../lib/contract/types.ts';
import type { FunctionOrigin } from '../../lib/function-client/function-client.ts';
import type { InformerView } from '../base/informer-view.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { selectsPrimary } from '../base/predicates.ts';

type Primaries = Pick<InformerView, 'on' | 'store' | 'hasSynced' | 'waitForSync'>;

/**
 * The function's origin to connect to (pure): none without a URL (a spec.function.ref not resolved yet), nor when
 * the primaries' cache is complete (shared with a Loop started before) and holds none this Loop selects.
 */
export function warmupTarget(loop: Pick<LoopConfig, 'namespaces' | 'selector' | 'caBundle'>, url: string | undefined, primaries: { synced: boolean; list: () => readonly KubeObject[] }): FunctionOrigin | undefined {
  if (url === undefined) return undefined;
  if (primaries.synced && !primaries.list().some((o) => selectsPrimary(loop, o))) return undefined;
  return { url, caBundle: loop.caBundle };
}

export interface WarmAhead {
  loop: LoopConfig;
  primary: Primaries;
  /** The URL calls go to now. */
  url: () => string | undefined;
  /** The invoker's (dispatch.ts); none for an in-process invoker. */
  preconnect: ((origin: FunctionOrigin) => void) | undefined;
  /** Opens the router's write session (start-router.ts). */
  writes: (() => void) | undefined;
}

/**
 * The write session after this turn, so the lists' requests leave first and its handshake overlaps their wait; the
 * function's connection now, or, for a reference not resolved yet, at the first primary the list brings once it
 * is (until the sync: from then on the first calls leave at once). Returns the unsubscribe.
 */
export function warmAhead(w: WarmAhead): () => void {
  if (w.writes) setImmediate(w.writes);
  const preconnect = w.preconnect;
  if (!preconnect) return () => {};
  const store = w.primary.store;
  const now = warmupTarget(w.loop, w.url(), { synced: w.primary.hasSynced, list: () => store.list() });
  // After this turn too: its connect, through the address guard, follows the lists' requests.
  if (now) setImmediate(() => preconnect(now));
  if (now || w.url() !== undefined || w.primary.hasSynced) return () => {};
  const off = w.primary.on('gathered', (object) => {
    const target = selectsPrimary(w.loop, object) ? warmupTarget(w.loop, w.url(), { synced: false, list: () => [] }) : undefined;
    if (!target) return;
    off();
    preconnect(target);
  });
  w.primary.waitForSync().then(off, off);
  return off;
}
