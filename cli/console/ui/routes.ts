// The UI's places as hash routes, so every view has a link (back/forward, bookmarks, opening in a new tab).
export type Route =
  | { view: 'overview' }
  | { view: 'loop'; id: string }
  | { view: 'hook'; id: string }
  | { view: 'history'; loop: string; namespace?: string; name: string }
  | { view: 'trace'; id: string; from?: string };

const enc = encodeURIComponent;

export function href(route: Route): string {
  switch (route.view) {
    case 'overview':
      return '#/';
    case 'loop':
      return `#/loop/${enc(route.id)}`;
    case 'hook':
      return `#/hook/${enc(route.id)}`;
    case 'history':
      return `#/history/${enc(route.loop)}/${enc(route.namespace ?? '_')}/${enc(route.name)}`;
    case 'trace':
      return `#/trace/${enc(route.id)}${route.from ? `?from=${enc(route.from)}` : ''}`;
  }
}

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [view, a, b, c] = parts;
  if (view === 'loop' && a) return { view: 'loop', id: a };
  if (view === 'hook' && a) return { view: 'hook', id: a };
  if (view === 'history' && a && b && c) return { view: 'history', loop: a, ...(b === '_' ? {} : { namespace: b }), name: c };
  if (view === 'trace' && a) {
    const from = new URLSearchParams(search).get('from');
    return { view: 'trace', id: a, ...(from ? { from } : {}) };
  }
  return { view: 'overview' };
}
