// The console's single page: a header, and the view the location hash names (overview, a Loop, an object's
// history, a hook's admissions, a trace). Bundled with preact and htm by cli/console/bundle-ui.js; no request leaves the console.
import { html, render } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { HistoryView } from './history-view.ts';
import { HookView } from './hook-view.ts';
import { LoopView } from './loop-view.ts';
import { OverviewView } from './overview-view.ts';
import { href, parseRoute, type Route } from './routes.ts';
import { TraceView } from './trace-view.ts';

function view(route: Route) {
  switch (route.view) {
    case 'overview':
      return html`<${OverviewView} />`;
    case 'loop':
      return html`<${LoopView} id=${route.id} />`;
    case 'hook':
      return html`<${HookView} id=${route.id} />`;
    case 'history':
      return html`<${HistoryView} loop=${route.loop} namespace=${route.namespace} name=${route.name} />`;
    case 'trace':
      return html`<${TraceView} id=${route.id} from=${route.from} />`;
  }
}

function App() {
  const [route, setRoute] = useState<Route>(parseRoute(location.hash));
  useEffect(() => {
    const onHash = () => {
      setRoute(parseRoute(location.hash));
      // A new view: start reading it from its heading, as a page load would.
      requestAnimationFrame(() => document.getElementById('main')?.focus());
    };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  return html`<header class="top"><a class="brand" href=${href({ view: 'overview' })}>kubeloop console</a><span class="muted">what your kubeconfig may see</span></header>
    <main id="main" tabindex="-1">${view(route)}</main>`;
}

const root = document.getElementById('app') as HTMLElement;
// The static "Loading" text is not preact's to diff: clear it first.
root.textContent = '';
render(html`<${App} />`, root);
