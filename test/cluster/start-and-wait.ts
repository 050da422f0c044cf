// Child process for the lifecycle e2e test: starts a private control plane, prints {"dir", "pids"} as
// one JSON line, then idles until a signal arrives (or exits with code 3 when given "exit").
import { startControlPlane } from '../../cli/cluster/index.ts';

const plane = await startControlPlane({ nodes: 1 });
process.stdout.write(`${JSON.stringify({ dir: plane.dir, pids: plane.pids() })}\n`);
if (process.argv[2] === 'exit') process.exit(3);
setInterval(() => {}, 60_000);
