// `kubeloop init <dir>`: creates a function project (reconcile module, unit test, a recorded fixture,
// Dockerfile, Loop, Helm values, package.json depending on kubeloop) whose `npm test` passes at once;
// with --admission, an admission function project (an AdmissionHook instead of the Loop).
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseCommandArgs } from '../command-args.ts';
import { packageRoot } from '../package-root.ts';
import { installedKubeloopSpec } from '../init/installed-spec.ts';
import { readProjectOptions } from '../init/project-options.ts';
import { PROJECT_TEMPLATES, type ToolVersions } from '../init/templates/index.ts';
import { npxKubeloop } from '../init/templates/language-project.ts';
import { NotEmptyError, writeProject } from '../init/write-project.ts';

const USAGE = `usage: kubeloop init <dir> [--name NAME] [--for <apiVersion>/<Kind>] [--owns <apiVersion>/<Kind>]...
                     [--crd <group>/<version>/<Kind>] [--related <apiVersion>/<Kind>]...
                     [--admission validating|mutating] [--language typescript|python|go] [--cluster]
                     [--kubeloop-spec SPEC] [--force]

Creates a function project in <dir>: src/index.ts (the reconcile function), test/, fixtures/, Dockerfile,
loop.yaml (a namespaced Loop with its ServiceAccount, Role and RoleBinding), function.yaml (the function's
Deployment and Service), package.json, tsconfig.json, README.md. Nothing in it is cluster-scoped or names a
namespace: a namespace admin applies it with kubectl apply -n <namespace> (docs/tenants.md). Then:
  cd <dir> && npm install && npm test

  --name NAME            function name, a DNS label (default: the folder's name)
  --for APIVERSION/KIND  the kind it reconciles (default v1/ConfigMap), e.g. apps/v1/Deployment
  --owns APIVERSION/KIND a kind it creates and owns; repeat or separate with commas
  --crd GROUP/VERSION/KIND  a kind of your own that the function reconciles (instead of --for), e.g.
                         example.com/v1alpha1/Widget: crd.yaml (structural schema, spec and status), its
                         TypeScript type in src/<kind>.ts, a sample; kubeloop dev --function installs the CRD
  --related APIVERSION/KIND  a kind it reads (spec.related): the object named by an annotation on the primary
                         is sent in request.related, and its changes call the function; repeatable
  --admission TYPE       an admission function instead (validating: requires a label; mutating: adds one):
                         src/index.ts with defineAdmission (Python: @kubeloop.admission; Go: DefineAdmission),
                         admission-hook.yaml instead of loop.yaml; --for is then the kind it admits (default v1/Pod)
  --language LANGUAGE    python: function.py, test_function.py and the Python SDK (kubeloop/, standard library
                         only), then: python3 -m unittest; go: main.go, main_test.go and the Go SDK module
                         (kubeloop/, replace line in go.mod), then: go test ./... (both with fixtures/,
                         Dockerfile, loop.yaml, function.yaml; docs/sdks.md)
  --cluster              for a cluster admin: a ClusterLoop (or ClusterAdmissionHook) whose ServiceAccount is
                         in kubeloop-system with a ClusterRole, and values.yaml for the kubeloop chart, which
                         runs the function, instead of the namespaced kind and function.yaml
  --kubeloop-spec SPEC   the kubeloop dependency in package.json; default: how this kubeloop was installed
                         (file:<tarball> or file:<folder>), or ^<this version> when it came from the registry
  --force                write into a folder that is not empty, overwriting the generated files`;

/** What to run in a Python or Go project: its test, then serving it and checking it like the router would (`npx`: npxKubeloop). */
function nextSteps(language: 'python' | 'go', npx: string): string {
  const [test, serve] = language === 'python' ? ['python3 -m unittest', 'python3 function.py'] : ['go test ./...', 'go run .'];
  return `${test.padEnd(26)} # unit tests + the recorded fixture\n  ${serve.padEnd(26)} # serve it on :8080\n  ${npx} conformance http://localhost:8080/ --fixtures fixtures`;
}

interface OwnPackage {
  version: string;
  engines?: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
  overrides?: Record<string, unknown>;
}

/**
 * kubeloop's overrides as a project depending on it needs them: npm honours overrides only in the root
 * package, and "$undici" (a reference to kubeloop's own dependency) becomes that dependency's range.
 * Today: @kubernetes/client-node's undici is held at kubeloop's (undici 8 needs a newer Node than 20).
 */
export function rootOverrides(overrides: Record<string, unknown> | undefined, dependencies: Record<string, string>): Record<string, unknown> {
  const resolve = (value: unknown): unknown => {
    if (typeof value === 'string' && value.startsWith('$')) return dependencies[value.slice(1)] ?? value;
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
    return value;
  };
  return resolve(overrides ?? {}) as Record<string, unknown>;
}

/** The tool versions this kubeloop is built with, so the new project installs what was tested together. */
function toolVersions(pkg: OwnPackage): ToolVersions {
  return {
    typescript: pkg.devDependencies?.typescript ?? '^5.9.3',
    tsx: pkg.dependencies.tsx ?? '^4.23.15',
    typesNode: pkg.devDependencies?.['@types/node'] ?? '^24.0.0',
    node: pkg.devDependencies?.node ?? '^24.0.0',
    engines: pkg.engines ?? {},
    overrides: rootOverrides(pkg.overrides, pkg.dependencies),
  };
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'init',
    argv,
    { name: { type: 'string' }, for: { type: 'string' }, crd: { type: 'string' }, owns: { type: 'string', multiple: true }, related: { type: 'string', multiple: true }, admission: { type: 'string' }, language: { type: 'string' }, 'kubeloop-spec': { type: 'string' }, cluster: { type: 'boolean' }, force: { type: 'boolean' } },
    USAGE,
  );
  if (parsed.exitCode !== undefined) return parsed.exitCode;
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || !positionals[0]) {
    console.error(`kubeloop init: give exactly one folder\n\n${USAGE}`);
    return 2;
  }
  const dir = resolve(positionals[0]);
  const root = packageRoot();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as OwnPackage;
  const kubeloopSpec = values['kubeloop-spec'] ?? installedKubeloopSpec(root);
  let options;
  try {
    options = readProjectOptions(
      {
        dir,
        ...(values.name ? { name: values.name } : {}),
        ...(values.for ? { for: values.for } : {}),
        ...(values.crd ? { crd: values.crd } : {}),
        owns: values.owns ?? [],
        related: values.related ?? [],
        ...(values.admission !== undefined ? { admission: values.admission } : {}),
        ...(values.language !== undefined ? { language: values.language } : {}),
        ...(kubeloopSpec ? { kubeloopSpec } : {}),
        ...(values.cluster ? { cluster: true } : {}),
      },
      pkg.version,
    );
  } catch (error) {
    console.error(`kubeloop init: ${(error as Error).message}`);
    return 2;
  }
  const template = PROJECT_TEMPLATES[options.language ?? (options.admission ? 'admission' : 'function')];
  if (!template) throw new Error('the project template is missing');
  const files = template(options, toolVersions(pkg));
  try {
    await writeProject(dir, files, values.force === true);
  } catch (error) {
    if (!(error instanceof NotEmptyError)) throw error;
    console.error(`kubeloop init: ${error.message}`);
    return 2;
  }
  const shown = relative(process.cwd(), dir) || '.';
  const what = options.admission ? `a ${options.admission} admission function` : 'a function';
  console.log(`created ${options.name}: ${what} for ${options.for.kind} (${options.for.apiVersion}) in ${shown}`);
  for (const file of files) console.log(`  ${file.path}`);
  if (options.language) {
    console.log(`\nnext:\n  cd ${shown}\n  ${nextSteps(options.language, npxKubeloop(options))}`);
    return 0;
  }
  console.log(`kubeloop dependency: ${options.kubeloopSpec}${values['kubeloop-spec'] ? '' : ' (as this kubeloop was installed; --kubeloop-spec to change)'}`);
  const last = options.admission
    ? options.cluster
      ? 'kubectl apply -f admission-hook.yaml   # with kubeloop installed (docs/admission.md)'
      : 'kubectl apply -n <your-namespace> -f function.yaml -f admission-hook.yaml   # after pushing the image (README.md, docs/tenants.md)'
    : `npx kubeloop dev --function ./src/index.ts --loop loop.yaml   # on a local cluster with the router${options.crd ? ' (installs crd.yaml)' : ''}`;
  console.log(`\nnext:\n  cd ${shown}\n  npm install\n  npm test                 # unit tests + the recorded fixture over HTTP\n  npm start                # serve it on :8080\n  ${last}`);
  return 0;
}
