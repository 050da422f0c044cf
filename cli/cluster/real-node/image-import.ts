// Imports an OCI archive into a real node's containerd (the CRI's k8s.io namespace), so pods run its images with
// imagePullPolicy: Never. containerd's socket is a file in the node's directory: reachable from the host.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { nodeBinaryPaths } from '../node-binaries.ts';
import { nodePaths } from './node-config.ts';

const run = promisify(execFile);

export async function importIntoRealNode(nodeDir: string, archive: string): Promise<void> {
  const socket = nodePaths(nodeDir).containerdSocket;
  if (!existsSync(socket)) throw new Error(`no real node runs from ${nodeDir} (no containerd socket ${socket}); start one with "kubeloop cluster up --real-node"`);
  await run(nodeBinaryPaths().ctr, ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', archive], { maxBuffer: 1 << 24 });
}
