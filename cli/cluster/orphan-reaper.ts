// Last line of defence when the parent is SIGKILLed (no exit handler runs): a tiny detached node
// process watches the parent, then kills the control-plane components (etcd, kube-*, kwok, and a real
// node's containerd, shims, kubelet, kube-proxy, CoreDNS, namespace holder) whose command line names the
// control plane's directory, and a real node's containers (its cgroups), puts back the kernel settings its kubelet
// changed, and removes that directory if the harness created it. Linux only (/proc).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Where a real node keeps the kernel settings its kubelet changes, for the reaper to put back. */
export const KERNEL_TUNABLES_FILE = 'kernel-tunables.json';

// Plain JS for `node -e`: no tsx, starts in ~50 ms. argv: parentPid, dir, "rm" | "keep".
const REAPER = `
const fs = require('node:fs');
const [parent, dir, mode] = process.argv.slice(1);
const OURS = new Set(['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok',
  'containerd', 'containerd-shim-runc-v2', 'kubelet', 'kube-proxy', 'coredns', 'kube-router', 'pause']);
// A real node's containers live in its cgroups (one real node per machine, so these are this plane's).
const nodeCgroups = () => {
  const out = [];
  const walk = (d) => { let e = []; try { e = fs.readdirSync(d, { withFileTypes: true }); } catch { return; } for (const x of e) if (x.isDirectory()) walk(d + '/' + x.name); out.push(d); };
  for (const h of fs.readdirSync('/sys/fs/cgroup')) if (fs.existsSync('/sys/fs/cgroup/' + h + '/kubeloop-node')) walk('/sys/fs/cgroup/' + h + '/kubeloop-node');
  return out;
};
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
process.on('SIGTERM', () => process.exit(0));
setInterval(() => {
  if (alive(Number(parent))) return;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline = '';
    try { cmdline = fs.readFileSync('/proc/' + entry + '/cmdline', 'utf8'); } catch { continue; }
    const argv0 = cmdline.split('\\0')[0].split('/').pop();
    if (OURS.has(argv0) && cmdline.includes(dir + '/')) { try { process.kill(Number(entry), 'SIGKILL'); } catch {} }
  }
  if (fs.existsSync(dir + '/node')) {
    try { for (const [t, v] of Object.entries(JSON.parse(fs.readFileSync(dir + '/node/${KERNEL_TUNABLES_FILE}', 'utf8')))) fs.writeFileSync('/proc/sys/' + t, v + '\\n'); } catch {}
    for (const cg of nodeCgroups()) { let pids = []; try { pids = fs.readFileSync(cg + '/cgroup.procs', 'utf8').split('\\n').filter(Boolean); } catch {} for (const p of pids) { try { process.kill(Number(p), 'SIGKILL'); } catch {} } }
    setTimeout(() => { for (const cg of nodeCgroups()) { try { fs.rmdirSync(cg); } catch {} } }, 300);
  }
  if (mode === 'rm') setTimeout(() => { fs.rmSync(dir, { recursive: true, force: true }); process.exit(0); }, 500);
  else setTimeout(() => process.exit(0), 500);
}, 1000);
`;

/** Starts the watcher; call the returned function on a clean stop. No-op where /proc is missing. */
export function startOrphanReaper(dir: string, removeDir: boolean): () => void {
  if (!existsSync('/proc/self/cmdline')) return () => {};
  const reaper = spawn(process.execPath, ['-e', REAPER, String(process.pid), dir, removeDir ? 'rm' : 'keep'], {
    detached: true,
    stdio: 'ignore',
  });
  reaper.unref();
  return () => {
    try {
      reaper.kill('SIGTERM');
    } catch {
      // Already gone: nothing to stop.
    }
  };
}
