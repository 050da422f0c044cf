// `kubeloop console` in headless Chromium (Debian's package, driven by puppeteer-core) against a real control
// plane of its own (the history API's APIService is cluster-wide: the history suite registers its own on the
// shared plane) with a real router watching Loop objects, its history API registered as in kubeloop dev, and
// the console receiving the router's and the function's spans over OTLP. Each step of docs/observability.md's
// walkthrough is one test; each saves a screenshot under test-results/console/ and checks it is not blank.
// A gateway in this process serves a ClusterAdmissionHook and its admission history API (admissions.kubeloop.dev).
import type { V1Pod } from '@kubernetes/client-node';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenConsole } from '../../cli/console/open-console.ts';
import { traceHeaders, tracer } from '../../lib/observability/trace-context.ts';
import { context, trace } from '@opentelemetry/api';
import { eventually } from '../cluster/eventually.ts';
import type { RouterHarness } from '../support/router-harness.ts';
import { screenshot, waitForText } from './console-browser.ts';
import { startConsoleSuite, stopConsoleSuite } from './console-harness.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let h: RouterHarness;
let ns: string;
let admin: OpenConsole;
let viewer: OpenConsole;
let teams: { a: string; b: string };
let hookName: string;
let browser: Browser;

beforeAll(async () => {
  ({ h, ns, admin, viewer, teams, hookName, browser } = await startConsoleSuite());
}, 300_000);

afterAll(stopConsoleSuite);

async function open(console: OpenConsole, hash: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${console.url}/${hash}`, { waitUntil: 'load' });
  return page;
}

const podSets = () => `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`;
const pods = async () => (await h.client.request<{ items: V1Pod[] }>({ path: `/api/v1/namespaces/${ns}/pods` })).items.filter((p) => !p.metadata?.deletionTimestamp);

describe('kubeloop console', () => {
  it("shows a PodSet scaled from 3 to 5 in its timeline with its creates and status write, and opens its trace as a waterfall with the function's and the API server's spans", async () => {
    await h.client.request({ method: 'POST', path: podSets(), body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'web' }, spec: { replicas: 3 } } });
    await eventually('3 pods', async () => (await pods()).length === 3, 60_000);
    const scaled = await h.client.request<{ metadata: { resourceVersion: string } }>({ method: 'PATCH', path: `${podSets()}/web`, contentType: 'application/merge-patch+json', body: { spec: { replicas: 5 } } });
    await eventually('5 pods', async () => (await pods()).length === 5, 60_000);
    const trigger = `primary MODIFIED app.kubeloop.dev/v1alpha1/PodSet ${ns}/web rv=${scaled.metadata.resourceVersion}`;

    // From the Loop to the object, as a user finds it.
    const page = await open(admin, '#/loop/podset');
    await page.waitForSelector(`a[href="#/history/podset/${ns}/web"]`, { timeout: 60_000 });
    await page.click(`a[href="#/history/podset/${ns}/web"]`);
    const traceLink = await page.waitForFunction(
      (wanted: string) => {
        const entry = Array.from(document.querySelectorAll<HTMLElement>('.timeline .entry')).find((e) => {
          const text = e.innerText;
          return text.includes(wanted) && (text.match(/applied\s+create v1\/Pod/g) ?? []).length === 2 && /applied\s+status\b/.test(text);
        });
        return entry?.querySelector('a.trace-link')?.getAttribute('href');
      },
      { timeout: 90_000, polling: 500 },
      trigger,
    );
    await screenshot(page, 'podset-timeline');

    // The entry links to its trace: the waterfall has the reconcile, the call and the function's own span.
    const href = (await traceLink.jsonValue()) as string;
    expect(href).toMatch(/^#\/trace\/[0-9a-f]{32}/);
    await page.click(`a.trace-link[href="${href}"]`);
    await page.waitForSelector('.span-row[data-name="reconcile podset"]', { timeout: 60_000 });
    await page.waitForSelector('.span-row[data-name="function podset"]', { timeout: 60_000 });
    await page.waitForFunction(() => document.querySelectorAll('.span-row[data-name^="create v1/Pod"]').length === 2, { timeout: 60_000 });
    // The API server's span of each create, under the write that sent its traceparent.
    await page.waitForFunction(() => document.querySelectorAll('.span-row[data-service="apiserver"]').length >= 2, { timeout: 60_000 });
    // Keyboard: a row opens its details with Enter.
    await page.focus('.span-row[data-name="function podset"]');
    await page.keyboard.press('Enter');
    await waitForText(page, ['function podset', 'kubeloop-e2e']);
    await screenshot(page, 'trace-waterfall');
    await page.close();
  });

  it('shows a Loop whose function is down as Not Ready with the reason, and links it to its failed reconciles', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'broken', labels: { console: 'broken' } } } });
    const page = await open(admin, '#/');
    await page.waitForFunction(
      () => {
        const row = document.querySelector<HTMLElement>('tr[data-id="unreachable"]');
        return row !== null && row.innerText.includes('Not Ready') && row.innerText.includes('FunctionUnreachable');
      },
      { timeout: 120_000, polling: 500 },
    );
    // The router's figures are joined in: its failed reconciles are counted as errors.
    await page.waitForFunction(
      () => {
        const cells = Array.from(document.querySelectorAll<HTMLElement>('tr[data-id="unreachable"] td')).map((td) => Number(td.innerText));
        // Kind, Namespace, Ready, versions, Queue, In flight, Reconciles, Errors (the name is the row header).
        return (cells[6] ?? 0) > 0 && (cells[7] ?? 0) > 0;
      },
      { timeout: 60_000, polling: 500 },
    );
    await screenshot(page, 'overview');
    // Keyboard: the Loop's link, then Enter.
    await page.focus('a[href="#/loop/unreachable"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#failures-title ~ ul.links li').length > 0, { timeout: 90_000, polling: 500 });
    await waitForText(page, ['Recent failed reconciles', `${ns}/broken`]);
    // Its objects: only what its selector picks in its namespaces (not every ConfigMap of the cluster).
    expect(await page.$$eval('#objects-title ~ ul.links li', (items) => items.map((li) => (li as HTMLElement).innerText))).toEqual([`${ns}/broken`]);
    await screenshot(page, 'loop-failures');
    await page.close();
  });

  it("shows a user bound only to view in team-a team-a's Loops and not team-b's, and refuses them another namespace's history", async () => {
    const page = await open(viewer, '#/');
    await page.waitForSelector(`tr[data-kind="Loop"][data-id="${teams.a}/team-a-loop"]`, { timeout: 60_000 });
    await waitForText(page, [`Loop in ${teams.b}: not available to you (403)`]);
    expect(await page.$(`tr[data-id="${teams.b}/team-b-loop"]`)).toBeNull();
    expect(await page.$('tr[data-id="podset"]')).toBeNull();
    await screenshot(page, 'viewer-overview');

    await page.goto(`${viewer.url}/#/history/podset/${ns}/web`, { waitUntil: 'load' });
    await waitForText(page, [`The history of ${ns}/web: not available to you (403)`]);
    await screenshot(page, 'viewer-history-refused');
    await page.close();
  });

  it("shows a ClusterAdmissionHook's admissions as a timeline (the denial with its message, who asked) and opens an admission's trace", async () => {
    const configMap = (namespace: string, name: string, labels: Record<string, string> = {}, headers: Record<string, string> = {}) =>
      h.client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/configmaps`, body: { metadata: { name, labels } }, headers });
    // The hook is in effect once the API server sends it a forbidden ConfigMap (a dry run: recorded, marked so).
    await eventually('the console gate in effect', async () => {
      try {
        await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, query: { dryRun: 'All' }, body: { metadata: { name: 'probe', labels: { forbidden: 'yes' } } } });
        return false;
      } catch (error) {
        return (error as Error).message.includes('console-gate says no');
      }
    }, 90_000);
    await configMap(ns, 'admitted');
    await configMap(teams.b, 'team-b-admitted');
    // A sampled request (its traceparent): the API server samples it too and passes it to the gateway, which records the admission's trace.
    const span = tracer().startSpan('console test: create a forbidden ConfigMap');
    await expect(configMap(teams.a, 'refused', { forbidden: 'yes' }, traceHeaders(trace.setSpan(context.active(), span)))).rejects.toThrow(/console-gate says no to refused/);
    span.end();

    const page = await open(admin, '#/');
    await page.waitForSelector(`tr[data-id="${hookName}"] a`, { timeout: 60_000 });
    await page.click(`tr[data-id="${hookName}"] a`);
    const denied = await page.waitForFunction(
      (wanted: string) => {
        const entries = Array.from(document.querySelectorAll<HTMLElement>('.timeline.admissions .entry'));
        const refused = entries.find((e) => e.dataset.outcome === 'denied' && e.innerText.includes(`CREATE configmaps ${wanted}/refused`) && e.innerText.includes('console-gate says no to refused'));
        const admitted = entries.some((e) => e.dataset.outcome === 'allowed' && e.innerText.includes('/team-b-admitted'));
        return admitted ? refused?.querySelector('a.trace-link')?.getAttribute('href') : undefined;
      },
      { timeout: 90_000, polling: 500 },
      teams.a,
    );
    // Who asked: the admin's own user name, as the API server told the gateway.
    await waitForText(page, ['Admission history', 'by admin,', 'dry run']);
    await screenshot(page, 'hook-admissions');

    const href = (await denied.jsonValue()) as string;
    expect(href).toMatch(/^#\/trace\/[0-9a-f]{32}/);
    await page.click(`a.trace-link[href="${href}"]`);
    await page.waitForSelector(`.span-row[data-name="admit ${hookName}"]`, { timeout: 60_000 });
    await page.waitForSelector(`.span-row[data-name="call ${hookName}"]`, { timeout: 60_000 });
    await page.waitForSelector('.span-row[data-name="function console-gate"]', { timeout: 60_000 });
    await page.waitForSelector('.span-row[data-service="apiserver"]', { timeout: 60_000 });
    await screenshot(page, 'admission-trace');
    // Back from the trace to the hook it came from.
    await waitForText(page, ['back to the hook']);
    await page.click('nav.crumbs a');
    await page.waitForSelector('.timeline.admissions .entry', { timeout: 30_000 });
    await page.close();
  });

  it("refuses a hook's admission history to who may not get the hook, and then shows them only the admissions of objects they may get", async () => {
    // The viewer may list ClusterAdmissionHooks (the overview shows the hook) but not get one.
    const role = { metadata: { name: 'console-hook-reader' }, rules: [{ apiGroups: ['kubeloop.dev'], resources: ['clusteradmissionhooks'], verbs: ['list'] }] };
    await h.client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: role });
    await h.client.request({
      method: 'POST',
      path: `${RBAC}/clusterrolebindings`,
      body: { metadata: { name: 'console-hook-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'console-hook-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: teams.a }] },
    });
    const page = await open(viewer, `#/hook/${hookName}`);
    await waitForText(page, ['The admission history: not available to you (403)', `cannot get the admission history of ClusterAdmissionHook ${hookName}`]);
    expect(await page.$('.timeline.admissions .entry')).toBeNull();
    await screenshot(page, 'viewer-admissions-refused');

    // Allowed to get the hook, they see team-a's admissions (they may get its ConfigMaps) and only a count of the others.
    await h.client.request({ method: 'PUT', path: `${RBAC}/clusterroles/console-hook-reader`, body: { ...role, rules: [{ ...role.rules[0]!, verbs: ['get', 'list'] }] } });
    await page.waitForFunction(
      (team: string) => Array.from(document.querySelectorAll<HTMLElement>('.timeline.admissions .entry')).some((e) => e.innerText.includes(`${team}/refused`)),
      { timeout: 90_000, polling: 500 },
      teams.a,
    );
    await waitForText(page, ['more not shown', `configmaps in namespace ${teams.b}, which you may not get`, `configmaps in namespace ${ns}, which you may not get`]);
    const shown = await page.$$eval('.timeline.admissions .entry', (entries) => entries.map((e) => (e as HTMLElement).innerText));
    expect(shown.every((text) => text.includes(`${teams.a}/`))).toBe(true);
    await screenshot(page, 'viewer-admissions');
    await page.close();
  });

  it('keeps a long admission history fast: the newest 50 admissions are rendered, older ones a page at a time on request', async () => {
    for (let i = 0; i < 60; i += 1) await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, query: { dryRun: 'All' }, body: { metadata: { name: `bulk-${i}` } } });
    const page = await open(admin, `#/hook/${hookName}`);
    const shown = () => page.$$eval('.timeline.admissions .entry-head code', (codes) => codes.map((c) => (c as HTMLElement).innerText));
    await waitForText(page, [`CREATE configmaps ${ns}/bulk-59`]);
    expect(await shown()).toHaveLength(50);
    // The oldest admissions wait behind a button (reachable by keyboard), not in the page.
    expect(await shown()).not.toContain(`CREATE configmaps ${ns}/bulk-0`);
    const more = await page.waitForSelector('button.show-older');
    expect(await more!.evaluate((b) => (b as HTMLElement).innerText)).toMatch(/^Show \d+ older \(\d+ not shown yet\)$/);
    await page.focus('button.show-older');
    await page.keyboard.press('Enter');
    await waitForText(page, [`CREATE configmaps ${ns}/bulk-0`]);
    expect((await shown()).length).toBeGreaterThan(60);
    await page.close();
  });

  it('shows ClusterLoops and ClusterAdmissionHooks with no namespace', async () => {
    await h.client.request({
      method: 'POST',
      path: '/apis/kubeloop.dev/v1alpha1/clusterloops',
      body: { apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterLoop', metadata: { name: `console-cluster-${ns}` }, spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, function: { url: 'http://127.0.0.1:9/' }, serviceAccount: h.loopServiceAccount } },
    });
    const page = await open(admin, '#/');
    await page.waitForSelector(`tr[data-id="console-cluster-${ns}"]`, { timeout: 60_000 });
    const namespaceOf = (id: string) => page.$eval(`tr[data-id="${id}"] td.namespace`, (td) => (td as HTMLElement).innerText.trim());
    expect(await namespaceOf(`console-cluster-${ns}`)).toBe('');
    expect(await namespaceOf(hookName)).toBe('');
    expect(await namespaceOf(`${teams.a}/team-a-loop`)).toBe(teams.a);
    await page.close();
  });
});
