// Helpers of the sharding e2e and bench:shards: a recording function that attributes each call to the
// member that made it and catches overlapping calls per key, router member processes, and the member Leases.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Lease, V1LeaseList } from '@kubernetes/client-node';
import { CONTRACT_API_VERSION, type ReconcileRequest } from '../../lib/contract/types.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import type { Loop } from '../../api/loop.ts';
import { MemberSet } from '../../router/sharding/member-set.ts';
import { SHARD_ACK_LABEL, SHARD_GROUP_LABEL, SHARD_KEYS_LABEL, SHARD_MEMBERS_LABEL, SHARD_MODE_LABEL, SHARD_VIEW_LABEL } from '../../router/sharding/member-lease.ts';
import { closeServer } from './close-server.ts';

export interface RecordedCall {
  member: string;
  loop: string;
  key: string;
  resourceVersion: string;
  trigger: string;
  at: number;
}

export interface RecordingFunction {
  /** The URL a member calls: calls are attributed to it by path. */
  url(member: string): string;
  calls: RecordedCall[];
  /** Keys called by a second member (or twice) while a call for them was in flight. */
  overlaps: string[];
  close(): Promise<void>;
}

/** Answers every ReconcileRequest with no actions after `holdMs`, recording who called for what. */
export async function serveRecordingFunction(holdMs = 5): Promise<RecordingFunction> {
  const calls: RecordedCall[] = [];
  const overlaps: string[] = [];
  const inFlight = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReconcileRequest;
      const meta = request.object.metadata ?? {};
      const key = `${request.loop}/${meta.namespace ?? ''}/${meta.name ?? ''}`;
      if (inFlight.has(key)) overlaps.push(key);
      inFlight.add(key);
      calls.push({ member: (req.url ?? '').split('/').pop() ?? '', loop: request.loop, key: `${meta.namespace ?? ''}/${meta.name ?? ''}`, resourceVersion: meta.resourceVersion ?? '', trigger: request.trigger.type, at: Date.now() });
      setTimeout(() => {
        inFlight.delete(key);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: CONTRACT_API_VERSION, kind: 'ReconcileResponse', actions: [] }));
      }, holdMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: (member) => `http://127.0.0.1:${port}/m/${member}`,
    calls,
    overlaps,
    close: () => closeServer(server),
  };
}

export interface MemberProcessOptions {
  identity: string;
  kubeconfig: string;
  dir: string;
  loops: Loop[];
  leaseNamespace: string;
  group: string;
  leaseDurationSeconds: number;
  /** `--sharding` (default); false for a single router. */
  sharding?: boolean;
  /** More router flags, e.g. `--sharding-server-side=false`. */
  extraArgs?: string[];
  /** Node arguments, the `kubeloop` script (a production bundle's cli/bin.js in the bench) and its environment; the CLI from source by default. */
  command?: { execArgv: string[]; script: string; env: NodeJS.ProcessEnv };
}

/** `kubeloop router --sharding` as its own process, its inline Loops in a file of its own. */
export function startMemberProcess(o: MemberProcessOptions): ChildProcess {
  const loopsFile = join(o.dir, `loops-${o.identity}.yaml`);
  writeFileSync(loopsFile, o.loops.map((l) => JSON.stringify(l)).join('\n---\n'));
  const routerArgs = ['--kubeconfig', o.kubeconfig, '--loops', loopsFile, ...(o.sharding === false ? [] : ['--sharding']), '--lease-namespace', o.leaseNamespace, '--lease-name', o.group,
    '--lease-duration-seconds', String(o.leaseDurationSeconds), '--identity', o.identity, '--port', '0', '--log-level', 'info', '--allow-loopback-functions', '--qps', '500', '--burst', '1000', ...(o.extraArgs ?? [])];
  const { execArgv, script, env } = o.command ?? { execArgv: [], script: 'cli/bin.js', env: { KUBELOOP_FROM_SOURCE: '1' } };
  // The member's log stays next to its Loops file, for a failing run to be read.
  const log = openSync(join(o.dir, `${o.identity}.log`), 'a');
  const child = spawn(process.execPath, [...execArgv, script, 'router', ...routerArgs], { stdio: ['ignore', log, 'inherit'], env: { ...process.env, ...env } });
  process.once('exit', () => child.kill('SIGKILL'));
  return child;
}

export interface MemberLeaseStatus {
  identity: string;
  view: string | undefined;
  ack: string | undefined;
  members: number;
  keys: number;
  /** `server` while the API server filters the member's share, `client` while it filters itself. */
  mode: string | undefined;
}

/** The group's member Leases as `kubectl get leases -l kubeloop.dev/router-shard-group=<group>` shows them. */
export async function memberLeases(client: KubeClient, namespace: string, group: string): Promise<MemberLeaseStatus[]> {
  const list = await client.request<V1LeaseList>({ path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, query: { labelSelector: `${SHARD_GROUP_LABEL}=${group}` } });
  return list.items.map((l: V1Lease) => {
    const labels = l.metadata?.labels ?? {};
    return { identity: l.spec?.holderIdentity ?? '', view: labels[SHARD_VIEW_LABEL], ack: labels[SHARD_ACK_LABEL], members: Number(labels[SHARD_MEMBERS_LABEL] ?? 0), keys: Number(labels[SHARD_KEYS_LABEL] ?? 0), mode: labels[SHARD_MODE_LABEL] };
  });
}

/** True once exactly these members have adopted one and the same view of themselves. */
export async function agreed(client: KubeClient, namespace: string, group: string, identities: string[]): Promise<MemberLeaseStatus[] | false> {
  const leases = (await memberLeases(client, namespace, group)).filter((l) => identities.includes(l.identity));
  const view = new MemberSet(identities).id;
  return leases.length === identities.length && leases.every((l) => l.view === view) && leases;
}
