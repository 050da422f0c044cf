// The real node's own network and mount namespaces, held by one process: a veth is its only link to the host,
// its /run is a private tmpfs, and every mount its programs make stays inside. When the last process in them
// exits both namespaces vanish, and with them the veth, its routes and every mount: teardown cannot miss one.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, readlinkSync } from 'node:fs';
import { spawnSupervised, type SupervisedProcess } from '../supervisor.ts';
import { NODE_NET } from './node-config.ts';

const run = promisify(execFile);

export interface NodeNamespace {
  holder: SupervisedProcess;
  pid: number;
  /** The command prefix that runs a program inside the node's namespaces. */
  enter(command: string, args: string[]): { command: string; args: string[] };
  /** Runs one command inside the namespaces and waits for it. */
  exec(command: string, args: string[]): Promise<string>;
  /** Inode strings of the namespaces (`net:[4026532]`), to find every process still inside them. */
  netNs: string;
  mntNs: string;
}

/** `holderBinary` is the cached pause binary: it sleeps until SIGTERM, and its command line names the node dir. */
export async function createNodeNamespace(holderBinary: string, dir: string, logDir: string): Promise<NodeNamespace> {
  const holder = spawnSupervised({
    name: 'node-namespace',
    command: '/usr/bin/unshare',
    args: ['--net', '--mount', '--propagation', 'private', '--', holderBinary, dir],
    logDir,
  });
  const pid = holder.pid;
  if (pid === undefined) throw new Error('could not start the node namespace holder (unshare)');
  // unshare execs the holder only after making every mount private: until then a mount could still reach the host.
  await holder.waitUntil('in its own namespaces', async () => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(`${holderBinary}\0`), 10_000);
  const enter = (command: string, args: string[]): { command: string; args: string[] } => ({
    command: '/usr/bin/nsenter',
    args: [`--target=${pid}`, '--net', '--mount', '--', command, ...args],
  });
  const ns: NodeNamespace = {
    holder,
    pid,
    enter,
    exec: async (command, args) => {
      const e = enter(command, args);
      return (await run(e.command, e.args)).stdout;
    },
    netNs: readlinkSync(`/proc/${pid}/ns/net`),
    mntNs: readlinkSync(`/proc/${pid}/ns/mnt`),
  };
  await ns.exec('/bin/mount', ['-t', 'tmpfs', '-o', 'mode=0755', 'kubeloop-node-run', '/run']);
  await ns.exec('/bin/mkdir', ['-p', '/run/lock']);
  return ns;
}

/** The veth (host end NODE_NET.hostInterface), the node's addresses and routes, forwarding inside the netns. */
export async function wireNodeNetwork(ns: NodeNamespace): Promise<void> {
  const { hostInterface, hostAddress, nodeAddress, linkPrefix, podCidr, serviceCidr } = NODE_NET;
  await run('/usr/sbin/ip', ['link', 'add', hostInterface, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', String(ns.pid)]);
  await run('/usr/sbin/ip', ['addr', 'add', `${hostAddress}/${linkPrefix}`, 'dev', hostInterface]);
  await run('/usr/sbin/ip', ['link', 'set', hostInterface, 'up']);
  await ns.exec('/usr/sbin/ip', ['link', 'set', 'lo', 'up']);
  await ns.exec('/usr/sbin/ip', ['addr', 'add', `${nodeAddress}/${linkPrefix}`, 'dev', 'eth0']);
  await ns.exec('/usr/sbin/ip', ['link', 'set', 'eth0', 'up']);
  await ns.exec('/usr/sbin/ip', ['route', 'add', 'default', 'via', hostAddress]);
  // These sysctls are the netns' own: the host's forwarding and bridge settings stay as they are.
  await ns.exec('/usr/sbin/sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1', 'net.bridge.bridge-nf-call-iptables=1']);
  // The API server (on the host) reaches webhooks through ClusterIPs and kubelets through the node address:
  // both ranges go over the veth. Routes on the veth's own device, gone with it.
  for (const cidr of [podCidr, serviceCidr]) await run('/usr/sbin/ip', ['route', 'add', cidr, 'via', nodeAddress, 'dev', hostInterface]);
}

/** Deletes the host end of the veth if it is still there (it goes by itself when the namespace does). */
export async function removeVeth(): Promise<void> {
  await run('/usr/sbin/ip', ['link', 'del', NODE_NET.hostInterface]).catch(() => undefined);
}

/** Whether the host still has the veth (teardown tests assert it does not). */
export async function vethPresent(): Promise<boolean> {
  return run('/usr/sbin/ip', ['link', 'show', NODE_NET.hostInterface]).then(
    () => true,
    () => false,
  );
}
