// Where the chart keeps its CRD files: Loop and AdmissionHook in the crds subchart's crds/ (Helm installs
// them before the release's Loops), the seeds' in files/crds/ (templates/crds.yaml). kubeloop dev, the
// tests and the benches apply these same files.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root.ts';

/** The two folders, relative to the package root. */
export const CHART_CRD_DIRS = ['charts/kubeloop/charts/crds/crds', 'charts/kubeloop/files/crds'] as const;

/** Absolute paths of every CRD file of the chart, sorted by file name. */
export function chartCrdFiles(root: string = packageRoot()): string[] {
  return CHART_CRD_DIRS.flatMap((dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.yaml')).map((f) => join(root, dir, f))).sort((a, b) =>
    a.slice(a.lastIndexOf('/')).localeCompare(b.slice(b.lastIndexOf('/'))),
  );
}

/** Absolute path of one CRD file by its file name, e.g. "clusterloops.kubeloop.dev.yaml". */
export function chartCrdFile(fileName: string, root: string = packageRoot()): string {
  const found = chartCrdFiles(root).find((f) => f.endsWith(`/${fileName}`));
  if (!found) throw new Error(`no CRD file ${fileName} in ${CHART_CRD_DIRS.join(' or ')}`);
  return found;
}
