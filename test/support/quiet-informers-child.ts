// Run as a child under the node flags being tested: opens N informers together on a bookmark server (as a router
// opens its watches), lets each hear bookmarks, then prints what a window of them left in the old generation.
// argv: <origin> <watches> <warm-up ms> <window ms>; env QUIET_INFORMERS_CA: the server's CA, PEM.
import * as kube from '../../lib/kube/index.ts';
import { oldGenerationGrowth } from './old-generation.ts';
import { startQuietInformers } from './quiet-informers.ts';

const [origin, watches, warmUpMs, windowMs] = process.argv.slice(2);
const heard = await startQuietInformers(kube, origin!, process.env.QUIET_INFORMERS_CA!, Number(watches));
await new Promise((warm) => setTimeout(warm, Number(warmUpMs)));
const growth = await oldGenerationGrowth();
const before = heard();
await new Promise((window) => setTimeout(window, Number(windowMs)));
const bookmarks = heard() - before;
process.stdout.write(`${JSON.stringify({ bookmarks, oldGenerationBytesPerBookmark: growth() / bookmarks })}\n`);
process.exit(0);
