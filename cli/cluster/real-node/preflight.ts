// Can this machine run the real node? Root, cgroups, runc, the CNI plugins, iptables, ipset and util-linux's
// nsenter/unshare; each missing piece is named with the way to get it, so `cluster up --real-node` can say
// so in one line (exit 2) while kwok-only planes keep working everywhere.
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';

export const CNI_BIN_DIR = '/usr/lib/cni';
const DEBIAN_PACKAGES = 'runc containernetworking-plugins iptables ipset';

interface Requirement {
  what: string;
  path: string;
  hint: string;
}

const REQUIREMENTS: Requirement[] = [
  { what: 'runc', path: '/usr/sbin/runc', hint: 'apt-get install -y runc' },
  { what: 'the CNI bridge plugin', path: `${CNI_BIN_DIR}/bridge`, hint: 'apt-get install -y containernetworking-plugins' },
  { what: 'the CNI host-local plugin', path: `${CNI_BIN_DIR}/host-local`, hint: 'apt-get install -y containernetworking-plugins' },
  { what: 'the CNI portmap plugin', path: `${CNI_BIN_DIR}/portmap`, hint: 'apt-get install -y containernetworking-plugins' },
  { what: 'iptables', path: '/usr/sbin/iptables', hint: 'apt-get install -y iptables' },
  { what: 'ipset', path: '/usr/sbin/ipset', hint: 'apt-get install -y ipset' },
  { what: 'nsenter', path: '/usr/bin/nsenter', hint: 'apt-get install -y util-linux' },
  { what: 'unshare', path: '/usr/bin/unshare', hint: 'apt-get install -y util-linux' },
  { what: 'ip', path: '/usr/sbin/ip', hint: 'apt-get install -y iproute2' },
];

async function present(path: string, mode = constants.X_OK): Promise<boolean> {
  return access(path, mode).then(
    () => true,
    () => false,
  );
}

/** What stops a real node here, as one line per missing piece (empty when nothing does). */
export async function realNodeBlockers(uid = process.getuid?.() ?? -1): Promise<string[]> {
  if (process.platform !== 'linux') return [`a real node needs Linux (this is ${process.platform}); use the kwok-only plane (kubeloop cluster up)`];
  const blockers: string[] = [];
  if (uid !== 0) blockers.push('root (containerd, runc and the kubelet create namespaces, cgroups and mounts): run as root, e.g. sudo');
  const cgroups = (await present('/sys/fs/cgroup/memory', constants.R_OK)) || (await present('/sys/fs/cgroup/cgroup.controllers', constants.R_OK));
  if (!cgroups) blockers.push('cgroups (neither /sys/fs/cgroup/memory nor a cgroup2 /sys/fs/cgroup): mount them, or run on a host or VM that has them');
  const missing = await Promise.all(REQUIREMENTS.map(async (r) => ((await present(r.path)) ? undefined : r)));
  const byHint = new Map<string, string[]>();
  for (const r of missing) if (r) byHint.set(r.hint, [...(byHint.get(r.hint) ?? []), `${r.what} (${r.path})`]);
  for (const [hint, whats] of byHint) blockers.push(`${whats.join(', ')}: ${hint}`);
  return blockers;
}

/** The one line `cluster up --real-node` prints before exiting 2. */
export function blockersMessage(blockers: string[]): string {
  return `kubeloop: this machine cannot run a real node: missing ${blockers.join('; ')} (Debian: apt-get install -y ${DEBIAN_PACKAGES})`;
}
