// Who may talk to the console: it holds the user's Kubernetes credentials, so a web page on another site
// must not read through it (an Origin that is not the console's own) nor reach it under another name (a
// Host that is not the address it serves on: DNS rebinding). Pure, so each case is unit-tested.

/** The addresses a loopback listener is reached by; any other bind address is reached by itself only. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127(\.\d{1,3}){3}$/.test(address);
}

/** The `host:port` values a request to this console may name in Host (and its Origin, with http://). */
export function ownHosts(address: string, port: number): Set<string> {
  const bracketed = address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
  const names = isLoopbackAddress(address) ? [...LOOPBACK_NAMES, bracketed] : [bracketed];
  return new Set(names.map((name) => `${name}:${port}`));
}

export type GuardVerdict = { ok: true } | { ok: false; reason: string };

/**
 * A request is ours when its Host is one of ours and, if the browser sent an Origin (it does on every
 * cross-site and every non-GET request), that Origin is http://<one of ours>. A client without a browser
 * (curl, an OTLP exporter) sends no Origin and is judged by Host alone.
 */
export function checkRequest(headers: { host?: string | undefined; origin?: string | undefined; 'sec-fetch-site'?: string | undefined }, hosts: ReadonlySet<string>): GuardVerdict {
  const host = headers.host?.toLowerCase();
  if (!host || !hosts.has(host)) return { ok: false, reason: `Host "${headers.host ?? ''}" is not this console's address (${[...hosts].join(', ')}): refused (DNS rebinding)` };
  const origin = headers.origin;
  if (origin !== undefined && origin !== 'null') {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.protocol !== 'http:' || !hosts.has(parsed.host.toLowerCase())) return { ok: false, reason: `Origin "${origin}" is not this console: cross-site requests are refused` };
  } else if (origin === 'null') return { ok: false, reason: 'Origin "null" (a sandboxed or file: page) is not this console: refused' };
  // Browsers that send Fetch Metadata say outright when another site made the request.
  if (headers['sec-fetch-site'] === 'cross-site') return { ok: false, reason: 'a cross-site request (Sec-Fetch-Site: cross-site) is refused' };
  return { ok: true };
}
